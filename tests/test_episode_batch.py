"""The batch around the engine: the one retry loop, pool, deadline rule and leak policy.

The episodes here are attempts that return records at once (a lost container, a graded finish), so that the pool's
own rules (slots, back-off outside them, order, where the callbacks run, what stops a batch) are what is measured;
the docker tests of the runner and the engine run the same parts with real containers.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.outcome import EpisodeOutcome, Termination
from terminal_agent.rollout.engine import GRADING_MARGIN_S, episode_deadline_s
from terminal_agent.rollout.episode import unscored_outcome
from terminal_agent.rollout.episode_batch import EpisodeJob, EpisodePool, LeakSweeper, RetryPolicy, run_with_retries
from terminal_agent.rollout.episode_record import EpisodeRecord
from terminal_agent.sandbox.bwrap import state as bwrap_state
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.labels import OWNER_PID, owner_labels
from terminal_agent.tasks.model import TaskLimits


def _lost(task_id: str = "t") -> EpisodeRecord:
    return EpisodeRecord(unscored_outcome(task_id, Termination.SANDBOX_ERROR, "container died", "sandbox"))


def _graded(task_id: str = "t") -> EpisodeRecord:
    return EpisodeRecord(EpisodeOutcome(task_id=task_id, termination=Termination.FINISHED, scored=True, reward=1.0))


def test_the_deadline_rule_is_the_agent_and_test_limits_plus_a_margin():
    limits = TaskLimits(agent_timeout_s=300.0, test_timeout_s=40.0)
    assert episode_deadline_s(limits) == 300.0 + 40.0 + GRADING_MARGIN_S
    # a caller's own agent budget: the longer of the two (the env applies the shorter, graded)
    assert episode_deadline_s(limits, agent_budget_s=100.0) == 300.0 + 40.0 + GRADING_MARGIN_S
    assert episode_deadline_s(limits, agent_budget_s=900.0) == 900.0 + 40.0 + GRADING_MARGIN_S


def test_the_retry_loop_keeps_the_last_attempt_stamped_with_its_retries_and_waits_between():
    attempts = iter([_lost(), _lost(), _graded()])
    slept: list[float] = []
    waited: list[float] = []
    seen: list[tuple[bool, int, bool]] = []
    policy = RetryPolicy(retries=3, delay_s=0.5, wait_ready_s=7.0, wait_ready=waited.append)
    record = run_with_retries(lambda: next(attempts), policy, task_id="t", sleep=slept.append,
                              on_attempt=lambda r, final: seen.append((r.scored, r.retries, final)))
    assert record.scored and record.retries == 2
    assert seen == [(False, 0, False), (False, 1, False), (True, 2, True)]
    assert slept == [0.5, 1.0] and waited == [7.0, 7.0]  # each sandbox failure waited for the backend


def test_the_retry_loop_stops_at_its_count_and_never_retries_other_kinds():
    calls: list[int] = []

    def lost() -> EpisodeRecord:
        calls.append(1)
        return _lost()

    record = run_with_retries(lost, RetryPolicy(retries=2, delay_s=0.0), task_id="t")
    assert len(calls) == 3 and not record.scored and record.retries == 2 and record.error_kind == "sandbox"
    grading = EpisodeRecord(unscored_outcome("t", Termination.GRADING_ERROR, "grader timed out", "grading"))
    calls.clear()
    assert run_with_retries(lambda: calls.append(1) or grading, RetryPolicy(retries=2), task_id="t").retries == 0
    assert len(calls) == 1


def test_the_pool_runs_at_most_its_concurrency_and_keeps_the_jobs_order():
    running = 0
    most = 0
    lock = threading.Lock()

    def episode(index: int) -> EpisodeRecord:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05 * (5 - index % 5))  # later jobs end first
        with lock:
            running -= 1
        return _graded(f"task-{index}")

    jobs = [EpisodeJob(i, f"task-{i}", 0, lambda i=i: episode(i)) for i in range(10)]
    caller = threading.get_ident()
    done_on: set[int] = set()
    done: list[int] = []

    def on_done(job: EpisodeJob[int], record: EpisodeRecord) -> None:
        done_on.add(threading.get_ident())
        done.append(job.key)

    records = EpisodePool(3).run(jobs, on_done=on_done)
    assert [r.outcome.task_id for r in records] == [f"task-{i}" for i in range(10)]
    assert most == 3 and sorted(done) == list(range(10)) and done_on == {caller}


def test_a_retry_back_off_holds_no_slot():
    """One slot: while the first episode waits out its back-off, the second runs."""
    events: list[str] = []
    lost_once: list[bool] = []

    def first() -> EpisodeRecord:
        if not lost_once:
            lost_once.append(True)
            events.append("first lost")
            return _lost("first")
        events.append("first retried")
        return _graded("first")

    def second() -> EpisodeRecord:
        events.append("second")
        return _graded("second")

    pool = EpisodePool(1, RetryPolicy(retries=1, delay_s=0.3))
    attempts: list[tuple[str, bool]] = []
    records = pool.run([EpisodeJob("a", "first", 0, first), EpisodeJob("b", "second", 0, second)],
                       on_attempt=lambda job, record, final: attempts.append((job.key, final)))
    # (the second may also have taken the slot first; either way it never waited for the first's back-off)
    assert events.index("first lost") < events.index("first retried")
    assert events.index("second") < events.index("first retried")
    assert [r.scored for r in records] == [True, True] and records[0].retries == 1
    assert sorted(attempts) == [("a", False), ("a", True), ("b", True)]


def test_a_fatal_error_stops_the_batch_and_the_episodes_not_started_never_run():
    started: list[int] = []

    def episode(index: int) -> EpisodeRecord:
        started.append(index)
        if index == 0:
            raise ConfigError("a policy client without token ids")
        time.sleep(0.05)
        return _graded()

    jobs = [EpisodeJob(i, "t", i, lambda i=i: episode(i)) for i in range(20)]
    with pytest.raises(ConfigError):
        EpisodePool(1).run(jobs)
    assert started[0] == 0 and len(started) < 20


def test_a_pool_refuses_no_concurrency():
    with pytest.raises(ValueError, match="concurrency"):
        EpisodePool(0)


def _planted_bwrap_leak(name: str, owner_pid: int) -> Path:
    """A bwrap sandbox's state directory whose owner record names ``owner_pid`` (no sandbox runs in it)."""
    record = {"labels": {**owner_labels("test-leak-sweeper", 3600, "terminal-agent/base:bookworm"),
                         OWNER_PID: str(owner_pid)}, "cgroups": []}
    return bwrap_state.create_sandbox_directory(bwrap_state.state_root(), name, record)


def _dead_pid() -> int:
    dead = subprocess.Popen(["true"])
    dead.wait()
    return dead.pid


def test_the_leak_sweeper_sweeps_at_the_start_then_keeps_sweeping_at_the_runs_interval(tmp_path, monkeypatch):
    monkeypatch.setenv(bwrap_state.STATE_DIR_ENV, str(tmp_path))  # this test's own bwrap state
    config = SandboxConfig(cleanup_interval_s=0.2)
    leaked = _planted_bwrap_leak("bw-0000000000a1", _dead_pid())
    alive = _planted_bwrap_leak("bw-0000000000a2", os.getpid())
    LeakSweeper(False, config=config).start().stop()
    assert leaked.is_dir()  # disabled: nothing swept
    with LeakSweeper(config=config):
        assert not leaked.exists() and alive.is_dir()  # swept at the start; the live owner's kept
        later = _planted_bwrap_leak("bw-0000000000a3", _dead_pid())
        deadline = time.monotonic() + 10
        while later.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not later.exists()  # the daemon, at the run's cleanup interval
    after = _planted_bwrap_leak("bw-0000000000a4", _dead_pid())
    time.sleep(0.5)
    assert after.is_dir() and alive.is_dir()  # stopped with the run
