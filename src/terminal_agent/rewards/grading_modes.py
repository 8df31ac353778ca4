"""The grading modes: ``task.verifier.mode`` -> the grader of that protocol.

>>> GRADING_MODES.names()
['harbor', 'weighted_pytest']

Every entry is a factory with one signature, ``(settings: GraderSettings) -> grader``, and every grader has
``grade(sandbox, task, *, workdir=None) -> DetailedGradeResult`` and never raises for infrastructure failures.
:class:`ModeGraders` builds each mode's grader once and picks it per task (an rLLM workflow hands one env a
new task per episode, of either mode).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from terminal_agent.registry import Registry
from terminal_agent.rewards.grading import DetailedGradeResult, Grader, GradingConfig
from terminal_agent.tasks.model import GradingMode, Task


class EpisodeGrader(Protocol):
    def grade(self, sandbox: Any, task: Task, *, workdir: str | None = None) -> DetailedGradeResult: ...


@dataclass(frozen=True)
class GraderSettings:
    """What a grading mode's grader may need."""

    grading: GradingConfig = field(default_factory=GradingConfig)
    sandbox: Any = None
    """The env's ``SandboxConfig`` (a separate verifier environment starts a sandbox with it)."""
    run_id: str | None = None


GRADING_MODES: Registry[Callable[[GraderSettings], EpisodeGrader]] = Registry("grading mode")


@GRADING_MODES.register(GradingMode.WEIGHTED_PYTEST.value)
def weighted_pytest_grader(settings: GraderSettings) -> EpisodeGrader:
    return Grader(settings.grading)


@GRADING_MODES.register(GradingMode.HARBOR.value)
def harbor_grader(settings: GraderSettings) -> EpisodeGrader:
    from terminal_agent.rewards.harbor_verifier import HarborGrader

    return HarborGrader(settings.grading, sandbox_config=settings.sandbox, run_id=settings.run_id)


class ModeGraders:
    """One grader per mode, built on first use, picked by ``task.verifier.mode``."""

    def __init__(self, settings: GraderSettings | None = None):
        self.settings = settings or GraderSettings()
        self._graders: dict[str, EpisodeGrader] = {}
        self._lock = threading.Lock()

    def for_task(self, task: Task) -> EpisodeGrader:
        mode = task.verifier.mode.value
        with self._lock:
            if mode not in self._graders:
                self._graders[mode] = GRADING_MODES.get(mode)(self.settings)
            return self._graders[mode]

    def grade(self, sandbox: Any, task: Task, *, workdir: str | None = None) -> DetailedGradeResult:
        return self.for_task(task).grade(sandbox, task, workdir=workdir)


__all__ = ["GRADING_MODES", "EpisodeGrader", "GraderSettings", "ModeGraders"]
