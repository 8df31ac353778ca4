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
"""

from __future__ import annotations

from typing import Any

from terminal_agent.registry import Registry

GRADING_MODES: Registry[Any] = Registry("grading mode")
"""Name -> grader factory (``(GraderSettings) -> EpisodeGrader``); the names are ``VerifierSpec.mode``'s values."""

GRADING_MODES.register_path("weighted_pytest", "terminal_agent.rewards.weighted_pytest.grader:weighted_pytest_grader")
GRADING_MODES.register_path("harbor", "terminal_agent.rewards.harbor.verifier:harbor_grader")
