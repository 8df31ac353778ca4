"""The one episode engine: its client wrapper, wall clock, failure records, retries and frozen records.

The docker tests run the real env (a container per episode) under the engine; the others drive the engine's
parts with the shipped scripted client.
"""

from __future__ import annotations

import dataclasses
import threading
import time

import docker
import pytest

from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.env import DockerIsolatedEnv, EnvConfig
from terminal_agent.errors import ConfigError, ImageError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.outcome import Termination
from terminal_agent.rollout.engine import EpisodeEngine, EpisodeHandle, EpisodeSettings
from terminal_agent.rollout.episode_batch import RetryPolicy, run_with_retries
from terminal_agent.rollout.episode import unscored_outcome
from terminal_agent.rollout.episode_client import EpisodeClient
from terminal_agent.rollout.episode_record import EpisodeRecord
from terminal_agent.sandbox import labels
from test_runner_retries import TASK  # the one-file answer task, written once

def _env(run_id: str):
    """A maker of the real env, its containers labelled with ``run_id`` (each test its own)."""
    return lambda: DockerIsolatedEnv(TASK, EnvConfig(max_steps=4, run_id=run_id))


ANSWER = "<bash>\ncmd: echo 42 > /app/answer.txt\n</bash>"
FINISH = "<finish>\nmessage: done\n</finish>"


def _with_tokens(text: str, first_id: int) -> ModelResponse:
    return ModelResponse(text=text, prompt_tokens=3, completion_tokens=2, prompt_ids=[1, 2, 3],
                         completion_ids=[first_id, first_id + 1], logprobs=[-0.1, -0.2])


def test_the_client_wrapper_seeds_each_call_meters_it_and_keeps_texts_and_tokens():
    seen: list[dict] = []

    class Recording(ScriptedModelClient):
        def complete(self, messages, **sampling):
            seen.append(sampling)
            return super().complete(messages, **sampling)

    client = EpisodeClient(Recording([_with_tokens("a", 10), "b"]), seed=100, sampling={"temperature": 0.5})
    client.complete([{"role": "user", "content": "hi"}], max_tokens=8)
    client.complete([{"role": "user", "content": "hi"}])
    assert [s["seed"] for s in seen] == [100, 101] and seen[0]["temperature"] == 0.5 and seen[0]["max_tokens"] == 8
    assert client.texts == ["a", "b"]
    assert [t.completion_ids for t in client.turn_tokens] == [[10, 11]]  # the second reply had no ids
    assert client.prompt_tokens >= 3 and len(client.calls) == 2 and client.calls[0].response.text == "a"


def test_a_trainer_client_without_token_ids_is_a_setup_error():
    client = EpisodeClient(ScriptedModelClient(["no ids"]), require_tokens=True)
    with pytest.raises(ConfigError, match="token ids"):
        client.complete([{"role": "user", "content": "hi"}])


def test_a_client_that_is_not_thread_safe_is_called_one_episode_at_a_time():
    inside = [0]
    most = [0]
    guard = threading.Lock()

    def reply(messages):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.05)
        with guard:
            inside[0] -= 1
        return "x"

    lock = threading.Lock()
    clients = [EpisodeClient(ScriptedModelClient(reply), lock=lock) for _ in range(4)]
    threads = [threading.Thread(target=c.complete, args=([{"role": "user", "content": "q"}],)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1
    assert sum(c.wait_time_s for c in clients) > 0.05  # the queueing is metered apart from the model time


def test_a_failed_start_is_an_unscored_record_of_its_kind_and_a_fatal_error_stops_the_caller():
    engine = EpisodeEngine(EpisodeSettings(max_steps=2))

    def no_image():
        raise ImageError("no such image: terminal-agent/never")

    record = engine.run(no_image, TerminalBenchAgent, ScriptedModelClient([]), task_id="t", attempt=3)
    assert not record.scored and record.error_kind == "image" and record.termination is Termination.IMAGE_ERROR
    assert record.attempt == 3 and record.task_id == "t" and "never" in (record.error or "")

    fatal = EpisodeEngine(EpisodeSettings(max_steps=2, fatal=(ConfigError,)))

    def broken_config():
        raise ConfigError("bad preset key")

    with pytest.raises(ConfigError):
        fatal.run(broken_config, TerminalBenchAgent, ScriptedModelClient([]), task_id="t")


def test_the_retry_policy_retries_only_its_kinds_up_to_its_count_with_doubling_waits():
    policy = RetryPolicy(retries=2, error_kinds=frozenset({"sandbox"}), delay_s=1.5)
    lost = EpisodeRecord(unscored_outcome("t", Termination.SANDBOX_ERROR, "container died", "sandbox"))
    grader = EpisodeRecord(unscored_outcome("t", Termination.GRADING_ERROR, "grader timed out", "grading"))
    assert policy.wants_retry(lost, 0) and policy.wants_retry(lost, 1) and not policy.wants_retry(lost, 2)
    assert not policy.wants_retry(grader, 0)
    assert [policy.delay_before(n) for n in (1, 2, 3)] == [1.5, 3.0, 6.0]


def test_records_are_frozen():
    record = EpisodeRecord(unscored_outcome("t", Termination.SANDBOX_ERROR, "x", "sandbox"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.attempt = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.outcome.scored = True


@pytest.mark.docker
def test_an_episode_runs_to_a_graded_record_with_its_tokens_and_the_env_closed():
    engine = EpisodeEngine(EpisodeSettings(max_steps=4, require_tokens=True))
    handle = EpisodeHandle()
    client = ScriptedModelClient([_with_tokens(ANSWER, 10), _with_tokens(FINISH, 20)])
    record = engine.run(_env("test-engine-graded"), TerminalBenchAgent, client, task_id=TASK.task_id, attempt=1,
                        seed=7, handle=handle)
    assert record.scored and record.reward == 1.0 and record.termination is Termination.FINISHED
    assert record.texts == (ANSWER, FINISH) and [t.completion_ids[0] for t in record.outcome.turn_tokens] == [10, 20]
    assert record.attempt == 1 and record.env_s > 0 and record.wall_s >= record.env_s
    assert record.outcome.tests[0].name == "test_answer" and record.outcome.tests[0].passed
    assert handle.env is not None and handle.env.sandbox is None  # closed: its container is gone


@pytest.mark.docker
def test_past_its_wall_clock_the_engine_returns_at_once_and_the_container_is_gone(docker_client):
    def stuck(messages):
        time.sleep(6)
        return FINISH

    engine = EpisodeEngine(EpisodeSettings(max_steps=2, deadline_s=1.5))
    handle = EpisodeHandle()
    started = time.monotonic()
    record = engine.run(_env("test-engine-wall-clock"), TerminalBenchAgent, ScriptedModelClient(stuck),
                        task_id=TASK.task_id, handle=handle)
    assert time.monotonic() - started < 5  # the engine did not wait for the stuck model call
    assert record.termination is Termination.EPISODE_TIMEOUT and not record.scored and record.error_kind == "timeout"
    assert handle.timed_out.is_set()
    left = docker_client.containers.list(all=True, filters={"label": f"{labels.RUN_ID}=test-engine-wall-clock"})
    assert left == []


@pytest.mark.docker
@pytest.mark.parametrize("backend", ["docker", "bwrap"])
def test_past_its_wall_clock_a_hung_command_is_killed_without_waiting_for_it(backend, docker_client):
    """The env holds its lock while a command runs; closing it from the engine's thread must not wait for that
    command (here 61 s, allowed by the task): the sandbox is closed under it, and the late thread ends unscored."""
    run_id = f"test-engine-hung-{backend}"
    limits = TASK.limits.model_copy(update={"command_timeout_s": 300.0})
    task = TASK.model_copy(update={"task_id": f"engine-hung-{backend}", "limits": limits})
    sandbox = None
    if backend == "bwrap":
        from bwrap_support import bwrap_config

        sandbox = bwrap_config([task])
    config = EnvConfig(max_steps=4, run_id=run_id, **({"sandbox": sandbox} if sandbox is not None else {}))
    handle = EpisodeHandle()
    engine = EpisodeEngine(EpisodeSettings(max_steps=4, deadline_s=6.0))
    started = time.monotonic()
    record = engine.run(lambda: DockerIsolatedEnv(task, config), TerminalBenchAgent,
                        ScriptedModelClient(["<bash>\ncmd: sleep 61\n</bash>"] * 4), task_id=task.task_id, handle=handle)
    assert time.monotonic() - started < 20  # not the command's 61 s
    assert record.termination is Termination.EPISODE_TIMEOUT and not record.scored
    assert handle.env is not None and (handle.env.sandbox is None or not handle.env.sandbox.is_alive())
    deadline = time.monotonic() + 10
    while _processes_running("sleep 61") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _processes_running("sleep 61")  # the command died with its sandbox
    if backend == "docker":
        assert docker_client.containers.list(all=True, filters={"label": f"{labels.RUN_ID}={run_id}"}) == []


def _processes_running(command_line: str) -> bool:
    """Whether a process on this machine (a container's or a bwrap sandbox's too) runs ``command_line``."""
    from pathlib import Path

    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes().replace(b"\0", b" ").strip() == command_line.encode():
                return True
        except OSError:  # the process ended while we looked
            continue
    return False


@pytest.mark.docker
def test_a_lost_container_is_retried_and_the_last_attempt_is_the_record():
    kills: list[str] = []

    def reply(messages):
        if not kills:
            api = docker.from_env().api
            mine = api.containers(filters={"label": f"{labels.RUN_ID}=test-engine-retry", "status": "running"})
            api.kill(mine[0]["Id"])
            kills.append(mine[0]["Id"])
        turns = sum(1 for m in messages if m["role"] == "assistant")
        return ANSWER if turns == 0 else FINISH

    engine = EpisodeEngine(EpisodeSettings(max_steps=3))
    seen: list[tuple[str | None, bool]] = []
    record = run_with_retries(
        lambda: engine.run(_env("test-engine-retry"), TerminalBenchAgent, ScriptedModelClient(reply),
                           task_id=TASK.task_id),
        RetryPolicy(retries=1, delay_s=0.0), task_id=TASK.task_id,
        on_attempt=lambda r, final: seen.append((r.error_kind, final)),
    )
    assert seen == [("sandbox", False), (None, True)]
    assert record.scored and record.reward == 1.0 and record.retries == 1
