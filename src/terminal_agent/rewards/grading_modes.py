"""The grading modes: ``task.verifier.mode`` -> the grader of that protocol.

>>> GRADING_MODES.names()
['harbor', 'weighted_pytest']

The table of modes is :mod:`terminal_agent.tasks.grading_mode_registry` (one ``register_path`` line per mode,
naming its factory in the mode's own sub-package: ``rewards/weighted_pytest/grader.py``, ``rewards/harbor/verifier.py``).
Every entry is a factory with one signature, ``(settings: GraderSettings) -> grader``, and every grader has
``grade(sandbox, task, *, workdir=None) -> Grade`` on a
:class:`~terminal_agent.interfaces.GradingSandbox` and never raises for infrastructure failures.
:class:`ModeGraders` builds each mode's grader once and picks it per task (an rLLM workflow hands one env a
new task per episode, of either mode). :func:`grade_sandbox` is where an env's
:class:`~terminal_agent.interfaces.Sandbox` becomes a grader's: a backend that serves only the agent's half
gives a result that is not scored (error kind ``sandbox``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol

from terminal_agent.errors import SandboxError
from terminal_agent.interfaces import GradingSandbox, Sandbox
from terminal_agent.outcome import Grade
from terminal_agent.rewards.grading import GradingConfig, grade_at_boundary
from terminal_agent.tasks.grading_mode_registry import GRADING_MODES
from terminal_agent.tasks.model import Task

if TYPE_CHECKING:
    from terminal_agent.sandbox.config import SandboxConfig


class EpisodeGrader(Protocol):
    def grade(self, sandbox: GradingSandbox, task: Task, *, workdir: str | None = None) -> Grade: ...


@dataclass(frozen=True)
class GraderSettings:
    """What a grading mode's grader may need."""

    grading: GradingConfig = field(default_factory=GradingConfig)
    sandbox: SandboxConfig | None = None
    """The env's ``SandboxConfig`` (a separate verifier environment starts a sandbox with it)."""
    run_id: str | None = None


GraderFactory = Callable[[GraderSettings], EpisodeGrader]
"""The signature of every entry of ``GRADING_MODES``."""


class ModeGraders:
    """One grader per mode, built on first use, picked by ``task.verifier.mode``."""

    def __init__(self, settings: GraderSettings | None = None):
        self.settings = settings or GraderSettings()
        self._graders: dict[str, EpisodeGrader] = {}
        self._lock = threading.Lock()

    def for_task(self, task: Task) -> EpisodeGrader:
        mode = task.verifier.mode
        with self._lock:
            if mode not in self._graders:
                factory: GraderFactory = GRADING_MODES.get(mode)
                self._graders[mode] = factory(self.settings)
            return self._graders[mode]

    def grade(self, sandbox: GradingSandbox, task: Task, *, workdir: str | None = None) -> Grade:
        return self.for_task(task).grade(sandbox, task, workdir=workdir)


def grade_sandbox(grader: EpisodeGrader, sandbox: Sandbox, task: Task, *, workdir: str | None = None) -> Grade:
    """``grader.grade`` on the sandbox an agent used, when its backend serves the grader's members; otherwise a
    result that is not scored (``error_kind="sandbox"``): the backend's gap, never the model's 0."""
    if isinstance(sandbox, GradingSandbox):
        return grader.grade(sandbox, task, workdir=workdir)

    def refuse(timings: dict[str, float]) -> None:
        raise SandboxError(f"{type(sandbox).__name__} serves no grader: its backend has only the agent's half of the "
                           "sandbox contract (interfaces.Sandbox, not interfaces.GradingSandbox)")

    return grade_at_boundary(refuse, Grade(), task)


__all__ = ["GRADING_MODES", "EpisodeGrader", "GraderFactory", "GraderSettings", "ModeGraders", "grade_sandbox"]
