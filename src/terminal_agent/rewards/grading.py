"""What every grading mode shares: its settings, its result, and the steps before and around the tests.

The modes themselves are sub-packages, one per ``task.verifier.mode`` (:mod:`terminal_agent.rewards.weighted_pytest`,
:mod:`terminal_agent.rewards.harbor`), reached through the table of
:mod:`terminal_agent.tasks.grading_mode_registry` (:mod:`terminal_agent.rewards.grading_modes` picks one per task).
Here, written once for all of them:

* :class:`GradingConfig` (how episodes are graded; ``harbor`` holds the Harbor mode's settings and the offline
  verifier runtime both modes use); every mode fills one :class:`~terminal_agent.outcome.Grade` (the grade with its
  timings and diagnostics, the record the episode's outcome and the results files carry);
* step 1, :func:`agent_processes_held_for_grading`: every agent process killed, or frozen for tests that talk to
  them (:mod:`terminal_agent.rewards.agent_processes`);
* step 2, :func:`inspect_for_grading`: what the agent changed in the sandbox's filesystem and whether it touched
  the interpreter (:mod:`terminal_agent.rewards.tamper_detection`, whose public names are importable from here
  too), and :func:`late_tamper_signals`, the same inspection again after tests that ran beside the agent's
  processes;
* :func:`grade_at_boundary`, the one place where grading failures are caught: an infrastructure failure (sandbox
  errors, a grader past its deadline, no report) leaves the result not scored (``score=None``, ``error`` set),
  never 0 for the model.

A grader holds the sandbox as a :class:`~terminal_agent.interfaces.GradingSandbox`, so any registered backend is
graded the same way.
"""

from __future__ import annotations

import io
import logging
import tarfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import InfrastructureError
from terminal_agent.interfaces import GradingSandbox
from terminal_agent.outcome import Grade
from terminal_agent.rewards.agent_processes import KEEP, HeldProcesses, agent_process_policy, agent_processes_held
from terminal_agent.rewards.harbor_config import HarborGradingConfig
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
from terminal_agent.tasks.model import Task

__all__ = [
    "Change",
    "ChangeScan",
    "GradingConfig",
    "agent_processes_held_for_grading",
    "choose_interpreter",
    "find_path_shadowing",
    "find_tamper_signals",
    "grade_at_boundary",
    "inspect_for_grading",
    "late_tamper_signals",
    "scan_changes",
]

logger = logging.getLogger(__name__)


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
    """Settings of the Harbor verifier mode (tasks with ``verifier.mode = harbor``; see ``rewards/harbor/verifier.py``)."""


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


@contextmanager
def agent_processes_held_for_grading(sandbox: GradingSandbox, task: Task, config: GradingConfig,
                                     result: Grade, timings: dict[str, float]) -> Iterator[HeldProcesses]:
    """Step 1 of every grading mode: the agent's processes killed or frozen (per task) for the rest of the grading,
    recorded on ``result`` and timed (``kill_s``)."""
    mark = time.monotonic()
    with agent_processes_held(sandbox, agent_process_policy(task, config.agent_processes)) as held:
        timings["kill_s"] = time.monotonic() - mark
        result.agent_processes = "kept" if held.action == KEEP else "killed"
        result.agent_processes_kept = len(held.frozen)
        yield held


def inspect_for_grading(sandbox: GradingSandbox, config: GradingConfig, result: Grade,
                        timings: dict[str, float], extra_protected: Sequence[str] = ()) -> Inspection:
    """Step 2 of every grading mode: :func:`~terminal_agent.rewards.tamper_detection.inspect_changes` under
    ``config`` (``extra_protected``: programs the mode protects on top), recorded on ``result`` and timed
    (``inspect_s``). The caller decides what its signals cost."""
    mark = time.monotonic()
    found = inspect_changes(sandbox, config.python_candidates, prefer_host_read=config.change_source == "auto",
                            check_tamper=config.check_tamper, protected=[*config.protected_programs, *extra_protected])
    result.interpreter, result.pycache_isolated = found.interpreter, found.pycache_touched
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
    grade: Callable[[dict[str, float]], None], result: Grade, task: Task, what: str = "grading"
) -> Grade:
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
