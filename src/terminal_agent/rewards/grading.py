"""Weighted pytest grading of one episode, hardened against the agent that was just graded.

Order of a grading, every step through the :class:`~terminal_agent.interfaces.Sandbox` contract
(so any registered backend can be graded), never through the agent's shell:

1. kill every agent process (``sandbox.kill_agent_processes()``);
2. list what the agent changed in the sandbox's filesystem (``sandbox.list_changes``) and look for
   interpreter tampering; a tampered interpreter grades 0 with ``tamper_signals``;
3. copy the verifier in (one archive, ``sandbox.put_archive``): a fresh random root-only directory
   under ``/var/lib`` with the cached pytest bundle zip, the runner, a verifier ``pytest.ini`` and
   the task's tests;
4. run ``PYTHON -I -S -B runner.py`` as root with a deadline (``sandbox.run_privileged``); the runner
   re-sweeps processes, then runs pytest with ``--confcutdir``/``--rootdir`` on the tests dir, no
   cache provider, no plugin autoload, a per-test timeout and the JUnit report inside its own dir;
5. read the report back (``sandbox.read_file``) and score ``sum(weight*passed)/sum(weight)`` over
   every declared test (one that never reported failed); a failed or unreported guard test of the task
   zeroes or caps that score (``failed_guards`` names them).

Infrastructure failures (sandbox errors, a grader past its deadline, no report) return a
:class:`GradeResult` with ``score=None`` and ``error`` set: not scored, never 0.

Step 2 lives in :mod:`terminal_agent.rewards.tamper_detection`, step 5's parsing and scoring in
:mod:`terminal_agent.rewards.junit_scoring`; their public names are importable from here too. Steps 1 and 2 are
the same in every grading mode: :func:`agent_processes_held_for_grading` and :func:`inspect_for_grading` (the
Harbor mode calls them too). A grader holds the sandbox as a
:class:`~terminal_agent.interfaces.GradingSandbox`.
"""

from __future__ import annotations

import io
import json
import logging
import posixpath
import secrets
import tarfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import GradingError, InfrastructureError
from terminal_agent.interfaces import GradeResult, GradingSandbox
from terminal_agent.outcome import GradeSummary, TestVerdict
from terminal_agent.rewards.agent_processes import (
    KEEP,
    HeldProcesses,
    agent_process_policy,
    agent_processes_held,
    gate_signals,
)
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.guard_scoring import failed_guard_names
from terminal_agent.rewards.junit_scoring import parse_junit, score_tests
from terminal_agent.rewards.tamper_detection import (
    PROTECTED_PROGRAMS,
    Change,
    ChangeScan,
    Inspection,
    choose_interpreter,
    find_path_shadowing,
    find_tamper_signals,
    inspect_changes,
    scan_changes,
)
from terminal_agent.rewards.verifier_bundle import get_bundle, runner_source
from terminal_agent.rewards.weighted_requirements import missing_requirements_error, requirement_entries
from terminal_agent.tasks.model import Task

__all__ = [
    "Change",
    "ChangeScan",
    "DetailedGradeResult",
    "Grader",
    "GradingConfig",
    "choose_interpreter",
    "find_path_shadowing",
    "find_tamper_signals",
    "grade_episode",
    "parse_junit",
    "scan_changes",
    "score_tests",
]

logger = logging.getLogger(__name__)

TEST_FILE_NAME = "test_outputs.py"
VERIFIER_INI = b"[pytest]\n"


class GradingConfig(BaseModel):
    """How episodes are graded."""

    model_config = ConfigDict(extra="forbid")

    verifier_parent: str = "/var/lib"
    """Directory in the container under which the random verifier directory is created."""
    python_candidates: list[str] = Field(default_factory=lambda: ["/usr/bin/python3", "/usr/local/bin/python3"])
    """Interpreters the verifier may use, in order; the first that the image itself ships is taken."""
    startup_grace_s: float = Field(30.0, gt=0)
    """Added to the task's ``test_timeout_s`` to form the host-side deadline of the whole pytest run."""
    min_per_test_timeout_s: float = Field(5.0, gt=0)
    """Floor of the per-test timeout (``test_timeout_s / number of tests`` otherwise)."""
    check_tamper: bool = True
    """Look for interpreter tampering in the container's changes before running the tests."""
    protected_programs: list[str] = Field(default_factory=lambda: list(PROTECTED_PROGRAMS))
    """Name patterns of programs whose in-place change or deletion on PATH is tampering. Any image
    program (protected or not) shadowed by a new file earlier on PATH is neutralized instead: the
    tests run with a PATH that starts with links to the image's own programs."""
    change_source: Literal["auto", "diff"] = "auto"
    """``auto``: the backend reads its layers directly when it can (Docker: the overlay upper dir), else its API
    listing; ``diff``: always the API listing (``Sandbox.list_changes(prefer_host_read=False)``)."""
    agent_processes: Literal["auto", "kill"] = "auto"
    """``auto``: tasks whose tests run beside the agent's processes keep them (Harbor mode, terminal-bench v1
    tasks, or ``agent_processes: keep`` in a task's metadata; see ``rewards/agent_processes.py``); ``kill``:
    every agent process is killed before every task's tests."""
    harbor: HarborGradingConfig = Field(default_factory=HarborGradingConfig)
    """Settings of the Harbor verifier mode (tasks with ``verifier.mode = harbor``; see ``rewards/harbor_verifier.py``)."""


# --- the grader --------------------------------------------------------------------------------
@dataclass
class DetailedGradeResult(GradeResult):
    """A :class:`GradeResult` with timings and diagnostics for ``info``."""

    timings: dict[str, float] = field(default_factory=dict)
    error_kind: str | None = None
    interpreter: str = ""
    pycache_isolated: bool = False
    change_source: str = ""
    exit_code: int | None = None
    log_tail: str = ""
    path_overrides: dict[str, str] = field(default_factory=dict)
    """Shadowed program name -> the image's program the tests ran instead (see ``find_path_shadowing``)."""
    failed_guards: list[str] = field(default_factory=list)
    """Guard tests of the task that failed or were not reported, so the score was zeroed or capped."""
    agent_processes: str = ""
    """``kept`` (frozen while the grader prepared, running while the tests ran) or ``killed`` before the tests
    (``rewards/agent_processes.py``)."""
    agent_processes_kept: int = 0
    """How many of the agent's processes ran beside the tests (its idle shell counts)."""

    def summary(self) -> GradeSummary:
        """The grade as the episode's typed record carries it."""
        return GradeSummary(
            scored=self.scored,
            score=self.score,
            error=self.error,
            error_kind=self.error_kind,
            tests=tuple(TestVerdict(name=t.name, weight=t.weight, passed=t.passed, reported=t.reported,
                                    message=t.message, guard=t.guard) for t in self.tests),
            failed_guards=tuple(self.failed_guards),
            tamper_signals=tuple(self.tamper_signals),
            timings=dict(self.timings),
            duration_s=self.duration_s,
            interpreter=self.interpreter,
            pycache_isolated=self.pycache_isolated,
            path_overrides=dict(self.path_overrides),
            agent_processes=self.agent_processes,
            agent_processes_kept=self.agent_processes_kept,
            log_tail=self.log_tail,  # the test run's output tail: the Harbor trial's verifier/test-stdout.txt
        )

    def to_info(self) -> dict[str, Any]:
        """JSON-safe summary for an rLLM ``info`` dict (the summary's dict)."""
        return self.summary().to_info()


_R = TypeVar("_R", bound=DetailedGradeResult)


def _tar(entries: list[tuple[str, bytes | str | None, int]]) -> bytes:
    """An uncompressed tar of (name, bytes: file / str: symlink target / None: directory, mode), owned by root."""
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.mode = mode
            info.mtime = now
            info.uid = info.gid = 0
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(data, str):
                info.type = tarfile.SYMTYPE
                info.linkname = data
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


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
    entries += runtime or []  # the tests' own requirements (rewards/weighted_requirements.py)
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


def _grade_zero(result: DetailedGradeResult, task: Task) -> None:
    """Score a tampered container 0, with every declared test listed as failed and unreported."""
    _, result.tests = score_tests(task, {})
    result.score = 0.0


@contextmanager
def agent_processes_held_for_grading(sandbox: GradingSandbox, task: Task, config: GradingConfig,
                                     result: DetailedGradeResult, timings: dict[str, float]) -> Iterator[HeldProcesses]:
    """Step 1 of every grading mode: the agent's processes killed or frozen (per task) for the rest of the grading,
    recorded on ``result`` and timed (``kill_s``)."""
    mark = time.monotonic()
    with agent_processes_held(sandbox, agent_process_policy(task, config.agent_processes)) as held:
        timings["kill_s"] = time.monotonic() - mark
        result.agent_processes = "kept" if held.action == KEEP else "killed"
        result.agent_processes_kept = len(held.frozen)
        yield held


def inspect_for_grading(sandbox: GradingSandbox, config: GradingConfig, result: DetailedGradeResult,
                        timings: dict[str, float], extra_protected: Sequence[str] = ()) -> Inspection:
    """Step 2 of every grading mode: :func:`~terminal_agent.rewards.tamper_detection.inspect_changes` under
    ``config`` (``extra_protected``: programs the mode protects on top), recorded on ``result`` and timed
    (``inspect_s``). The caller decides what its signals cost."""
    mark = time.monotonic()
    found = inspect_changes(sandbox, config.python_candidates, prefer_host_read=config.change_source == "auto",
                            check_tamper=config.check_tamper, protected=[*config.protected_programs, *extra_protected])
    result.interpreter, result.change_source, result.pycache_isolated = found.interpreter, found.scan.source, found.pycache_touched
    result.path_overrides = dict(found.shadowing.overrides)
    timings["inspect_s"] = time.monotonic() - mark
    return found


def late_tamper_signals(sandbox: GradingSandbox, config: GradingConfig, before: list[str],
                        extra_protected: Sequence[str] = ()) -> list[str]:
    """The inspection again once the tests are over, for a grading that kept the agent's processes running beside
    them: every signal the first inspection (``before``) did not give is tampering during the tests."""
    found = inspect_changes(sandbox, config.python_candidates, prefer_host_read=config.change_source == "auto",
                            check_tamper=True, protected=[*config.protected_programs, *extra_protected])
    return [f"{signal} (while the agent's processes ran beside the tests)" for signal in found.signals
            if signal not in before]


def grade_at_boundary(
    grade: Callable[[dict[str, float]], None], result: _R, task: Task, what: str = "grading"
) -> _R:
    """Run ``grade(timings)``, which fills ``result``; the one boundary where grading failures are caught.

    Infrastructure failures (sandbox, grader, verifier, an image a separate verifier needs) and grader bugs leave
    ``result`` not scored (``score=None``, ``error``, ``error_kind``): never 0 for the model. Total time and the
    timings go onto ``result`` either way.
    """
    started = time.monotonic()
    timings: dict[str, float] = {}
    try:
        grade(timings)
    except (InfrastructureError, OSError) as exc:
        result.score = None
        result.error = f"{type(exc).__name__}: {exc}"
        result.error_kind = exc.kind if isinstance(exc, InfrastructureError) else "grading"
        logger.warning("%s %s failed: %s", what, task.task_id, result.error)
    except Exception as exc:  # noqa: BLE001 - a grader bug flags the sample, it never scores it 0
        logger.exception("%s %s crashed", what, task.task_id)
        result.score = None
        result.error = f"grader crashed: {type(exc).__name__}: {exc}"
        result.error_kind = "grading"
    result.duration_s = time.monotonic() - started
    timings["total_s"] = result.duration_s
    result.timings = timings
    return result


class Grader:
    """Grades episodes in their sandbox. Thread-safe; one instance can serve many envs."""

    def __init__(self, config: GradingConfig | None = None):
        self.config = config or GradingConfig()

    def grade(self, sandbox: GradingSandbox, task: Task, *, workdir: str | None = None) -> DetailedGradeResult:
        """Grade the episode that just ended in ``sandbox``. Never raises for infrastructure failures."""
        result = DetailedGradeResult(score=None)
        return grade_at_boundary(lambda timings: self._grade(sandbox, task, workdir, timings, result), result, task)

    def _grade(
        self, sandbox: GradingSandbox, task: Task, workdir: str | None, timings: dict[str, float],
        result: DetailedGradeResult
    ) -> None:
        with agent_processes_held_for_grading(sandbox, task, self.config, result, timings) as held:
            self._grade_held(sandbox, task, workdir, timings, result, held.job())

    def _grade_held(self, sandbox: GradingSandbox, task: Task, workdir: str | None, timings: dict[str, float],
                    result: DetailedGradeResult, gate: dict[str, Any] | None) -> None:
        inspection = inspect_for_grading(sandbox, self.config, result, timings)
        signals, interpreter, pycache_touched = inspection.signals, inspection.interpreter, inspection.pycache_touched
        if signals:
            result.tamper_signals = signals
            _grade_zero(result, task)
            logger.warning("task %s: interpreter tampering, graded 0: %s", task.task_id, signals)
            return

        mark = time.monotonic()
        verifier_dir = posixpath.join(self.config.verifier_parent, f"ta-verifier-{secrets.token_hex(12)}")
        runtime, _ = requirement_entries(task, verifier_dir.strip("/"), interpreter, self.config.harbor)
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
        result.exit_code = None if run.timed_out else run.exit_code
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



def grade_episode(sandbox: GradingSandbox, task: Task, config: GradingConfig | None = None) -> DetailedGradeResult:
    """Convenience: grade with a fresh :class:`Grader`."""
    return Grader(config).grade(sandbox, task)
