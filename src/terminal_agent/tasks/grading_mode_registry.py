"""The one table of grading modes: ``task.verifier.mode`` -> the factory of its grader, one line per mode.

A built-in mode is named by where its factory lives, so this module imports no grader (and nothing of
``rewards/``): :class:`~terminal_agent.tasks.model.VerifierSpec` checks a ``mode`` name here, the graders
import the task model, and no import comes back round. The factory's module is imported on the first
``GRADING_MODES.get(name)``. A new mode is one sub-package of ``rewards/`` with a factory plus one line here::

    GRADING_MODES.register_path("my_mode", "terminal_agent.rewards.my_mode.grader:my_mode_grader")

and a mode defined elsewhere (a plugin, a test) registers its factory object::

    GRADING_MODES.register("my_mode")(my_mode_grader)

Every factory has one signature, ``(settings: GraderSettings) -> EpisodeGrader``
(:mod:`terminal_agent.rewards.grading_modes`); the rest of the code picks a grader through
:class:`~terminal_agent.rewards.grading_modes.ModeGraders` and never names a mode to dispatch on.

A mode that asks something of a task's fields (``weighted_pytest``: weights naming the test functions of
``test_source``; ``harbor``: a ``tests/test.sh``) names its :class:`~terminal_agent.tasks.model.TaskFieldRules` as the ``task_fields``
companion of its line; :class:`~terminal_agent.tasks.model.Task` validation calls them for the task's mode and
names no mode itself. A mode without them asks nothing beyond what every task must have.
"""

from __future__ import annotations

from typing import Any

from terminal_agent.registry import Registry

GRADING_MODES: Registry[Any] = Registry("grading mode", companions=("task_fields",))
"""Name -> grader factory (``(GraderSettings) -> EpisodeGrader``); the names are ``VerifierSpec.mode``'s values.
A mode's ``task_fields`` companion is its :class:`~terminal_agent.tasks.model.TaskFieldRules`."""

_REWARDS = "terminal_agent.rewards"
GRADING_MODES.register_path("weighted_pytest", f"{_REWARDS}.weighted_pytest.grader:weighted_pytest_grader",
                            task_fields=f"{_REWARDS}.weighted_pytest.task_fields:TASK_FIELDS")
GRADING_MODES.register_path("harbor", f"{_REWARDS}.harbor.verifier:harbor_grader",
                            task_fields=f"{_REWARDS}.harbor.task_fields:TASK_FIELDS")


def task_field_rules(mode: str) -> Any:
    """The task-field rules of the grading mode ``mode`` (None: it has none), an object of the shape
    :class:`~terminal_agent.tasks.model.TaskFieldRules` declares (the task model, which calls them, owns that
    protocol, so this table needs nothing of the model). Raises ``ConfigError`` for an unknown mode."""
    return GRADING_MODES.companion(mode, "task_fields")
