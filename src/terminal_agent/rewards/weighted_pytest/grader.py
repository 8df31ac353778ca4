"""The ``weighted_pytest`` grading mode: the task's pytest tests, each with its weight, hardened against the agent
that was just graded.

Order of a grading, every step through the :class:`~terminal_agent.interfaces.Sandbox` contract
(so any registered backend can be graded), never through the agent's shell:

1. kill every agent process (``sandbox.kill_agent_processes()``), or freeze them for tests that talk to them;
2. list what the agent changed in the sandbox's filesystem (``sandbox.list_changes``) and look for
   interpreter tampering; a tampered interpreter grades 0 with ``tamper_signals``;
3. copy the verifier in (one archive, ``sandbox.put_archive``): a fresh random root-only directory
   under ``/var/lib`` with the cached pytest bundle zip, the runner, a verifier ``pytest.ini``, the
   task's tests and the wheels of their own requirements (:mod:`.requirements`);
4. run ``PYTHON -I -S -B runner.py`` as root with a deadline (``sandbox.run_privileged``); the runner
   re-sweeps processes, then runs pytest with ``--confcutdir``/``--rootdir`` on the tests dir, no
   cache provider, no plugin autoload, a per-test timeout and the JUnit report inside its own dir;
5. read the report back (``sandbox.read_file``) and score ``sum(weight*passed)/sum(weight)`` over
   every declared test (one that never reported failed); a failed or unreported guard test of the task
   zeroes or caps that score (``failed_guards`` names them).

Infrastructure failures (sandbox errors, a grader past its deadline, no report) return a
:class:`~terminal_agent.outcome.Grade` with ``score=None`` and ``error`` set: not scored,
never 0.

Steps 1 and 2 and the failure boundary are the same in every grading mode
(:mod:`terminal_agent.rewards.grading`); step 5's parsing and scoring is :mod:`.junit_scoring`.
:func:`weighted_pytest_grader` is the entry of the grading-mode table.
"""

from __future__ import annotations

import json
import logging
import posixpath
import secrets
import time
from typing import Any

from terminal_agent.errors import GradingError
from terminal_agent.interfaces import GradingSandbox
from terminal_agent.outcome import Grade
from terminal_agent.rewards.agent_processes import gate_signals
from terminal_agent.rewards.grading import (
    GradingConfig,
    _tar,
    agent_processes_held_for_grading,
    grade_at_boundary,
    inspect_for_grading,
    late_tamper_signals,
)
from terminal_agent.rewards.grading_modes import EpisodeGrader, GraderSettings
from terminal_agent.rewards.guard_scoring import failed_guard_names
from terminal_agent.rewards.verifier_bundle import get_bundle, runner_source
from terminal_agent.rewards.weighted_pytest.junit_scoring import parse_junit, score_tests
from terminal_agent.rewards.weighted_pytest.requirements import missing_requirements_error, requirement_entries
from terminal_agent.tasks.model import Task

__all__ = ["Grader", "grade_episode", "weighted_pytest_grader"]

logger = logging.getLogger(__name__)

TEST_FILE_NAME = "test_outputs.py"
VERIFIER_INI = b"[pytest]\n"


def _verifier_skeleton(task: Task, verifier_dir: str, path_overrides: dict[str, str] | None = None,
                       gate: dict[str, Any] | None = None,
                       runtime: list[tuple[str, bytes | str | None, int]] | None = None) -> bytes:
    rel = verifier_dir.strip("/")
    entries: list[tuple[str, bytes | str | None, int]] = []
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        entries.append(("/".join(parts[:depth]), None, 0o755))
    entries.append((rel, None, 0o700))
    entries.append((f"{rel}/tests", None, 0o755))
    entries.append((f"{rel}/bin", None, 0o755))  # first on the tests' PATH (see verifier_runner.py)
    for name, target in sorted((path_overrides or {}).items()):
        entries.append((f"{rel}/bin/{name}", target, 0o777))
    entries.append((f"{rel}/pytest.ini", VERIFIER_INI, 0o644))
    entries.append((f"{rel}/runner.py", runner_source(), 0o644))
    entries.append((f"{rel}/bundle.zip", get_bundle().data, 0o644))
    entries += runtime or []  # the tests' own requirements (rewards/weighted_pytest/requirements.py)
    if gate is not None:  # the agent's processes are frozen, not dead (see rewards/agent_processes.py)
        entries.append((f"{rel}/gate.json", json.dumps(gate).encode(), 0o644))
        entries.append((f"{rel}/agent_gate.py", _asset("agent_gate.py"), 0o644))
    entries.append((f"{rel}/tests/{TEST_FILE_NAME}", task.test_source.encode(), 0o644))
    made = {f"{rel}/tests"}
    for path, text in sorted(task.test_support_files.items()):
        target = f"{rel}/tests/{path.replace(chr(92), '/')}"
        parent = posixpath.dirname(target)
        missing = []
        while parent not in made and parent != rel:
            missing.append(parent)
            parent = posixpath.dirname(parent)
        for directory in reversed(missing):
            entries.append((directory, None, 0o755))
            made.add(directory)
        entries.append((target, text if isinstance(text, bytes) else text.encode(), 0o644))
    return _tar(entries)


def _asset(name: str) -> bytes:
    from importlib import resources

    return resources.files("terminal_agent.rewards").joinpath("assets", name).read_bytes()


def _read_optional(sandbox: GradingSandbox, path: str) -> bytes | None:
    """The file at ``path`` in the sandbox, None when it is absent."""
    try:
        return sandbox.read_file(path)
    except FileNotFoundError:
        return None


def _grade_zero(result: Grade, task: Task) -> None:
    """Score a tampered container 0, with every declared test listed as failed and unreported."""
    _, result.tests = score_tests(task, {})
    result.score = 0.0


class Grader:
    """Grades episodes in their sandbox. Thread-safe; one instance can serve many envs."""

    def __init__(self, config: GradingConfig | None = None):
        self.config = config or GradingConfig()

    def grade(self, sandbox: GradingSandbox, task: Task, *, workdir: str | None = None) -> Grade:
        """Grade the episode that just ended in ``sandbox``. Never raises for infrastructure failures."""
        result = Grade()
        return grade_at_boundary(lambda timings: self._grade(sandbox, task, workdir, timings, result), result, task)

    def _grade(
        self, sandbox: GradingSandbox, task: Task, workdir: str | None, timings: dict[str, float],
        result: Grade
    ) -> None:
        with agent_processes_held_for_grading(sandbox, task, self.config, result, timings) as held:
            self._grade_held(sandbox, task, workdir, timings, result, held.job())

    def _grade_held(self, sandbox: GradingSandbox, task: Task, workdir: str | None, timings: dict[str, float],
                    result: Grade, gate: dict[str, Any] | None) -> None:
        inspection = inspect_for_grading(sandbox, self.config, result, timings)
        signals, interpreter, pycache_touched = inspection.signals, inspection.interpreter, inspection.pycache_touched
        if signals:
            result.tamper_signals = signals
            _grade_zero(result, task)
            logger.warning("task %s: interpreter tampering, graded 0: %s", task.task_id, signals)
            return

        mark = time.monotonic()
        verifier_dir = posixpath.join(self.config.verifier_parent, f"ta-verifier-{secrets.token_hex(12)}")
        runtime, _ = requirement_entries(task, verifier_dir.strip("/"), interpreter, self.config.harbor, sandbox)
        sandbox.put_archive("/", _verifier_skeleton(task, verifier_dir, inspection.shadowing.overrides, gate, runtime))
        timings["upload_s"] = time.monotonic() - mark

        mark = time.monotonic()
        keep = ",".join(str(pid) for pid in sandbox.service_pids)
        n_tests = max(1, len(task.test_functions))
        per_test = max(self.config.min_per_test_timeout_s, task.limits.test_timeout_s / n_tests)
        cmd = [interpreter, "-I", "-S", "-B"]
        if pycache_touched:
            cmd += ["-X", f"pycache_prefix={verifier_dir}/pycache"]
        cmd += [f"{verifier_dir}/runner.py", verifier_dir, workdir or sandbox.image_workdir or "/", f"{per_test:.1f}", keep]
        deadline = task.limits.test_timeout_s + self.config.startup_grace_s
        run = sandbox.run_privileged(cmd, deadline)
        timings["run_s"] = time.monotonic() - mark
        text = run.output
        result.log_tail = text[-4000:]
        if run.timed_out:
            raise GradingError(f"the tests ran past the grader's deadline of {deadline:.0f} s")

        mark = time.monotonic()
        status_raw = _read_optional(sandbox, f"{verifier_dir}/out/status.json")
        report = _read_optional(sandbox, f"{verifier_dir}/out/report.xml") if status_raw is not None else None
        timings["read_s"] = time.monotonic() - mark
        if status_raw is None:
            raise GradingError(f"the verifier did not start (exit {run.exit_code}): {text[-1500:]}")
        status = json.loads(status_raw)
        if status.get("missing_requirements"):  # pytest did not run: the host cannot provide what the tests import
            raise missing_requirements_error(status["missing_requirements"])
        if status.get("survivors"):
            result.tamper_signals.append(f"{status['survivors']} agent process(es) survived the kill")
        if status.get("realpath") != verifier_dir:
            result.tamper_signals.append(f"verifier dir redirected to {status.get('realpath')}")
        result.tamper_signals += gate_signals(status)
        if gate and gate.get("frozen") and self.config.check_tamper and not result.tamper_signals:
            mark = time.monotonic()  # the agent's processes ran after the first scan: scan again
            result.tamper_signals += late_tamper_signals(sandbox, self.config, signals)
            timings["rescan_s"] = time.monotonic() - mark
        if result.tamper_signals:  # the tests ran in a compromised container: their report does not count
            _grade_zero(result, task)
            return
        if report is None:
            raise GradingError(f"pytest wrote no report (exit {run.exit_code}): {text[-1500:]}")
        result.score, result.tests = score_tests(task, parse_junit(report))
        result.failed_guards = failed_guard_names(result.tests)


def grade_episode(sandbox: GradingSandbox, task: Task, config: GradingConfig | None = None) -> Grade:
    """Convenience: grade with a fresh :class:`Grader`."""
    return Grader(config).grade(sandbox, task)


def weighted_pytest_grader(settings: GraderSettings) -> EpisodeGrader:
    """The grading-mode table's entry for ``weighted_pytest``."""
    return Grader(settings.grading)
