"""The one scoring rule of both grading modes: the weighted share of passed tests, then the task's guards.

A guard test ("the inputs are unchanged", "nothing else was touched") earns nothing by itself; when one failed
or was never reported, the score is zeroed or capped (:class:`~terminal_agent.tasks.model.TestGuards`). The
weighted pytest grader (:mod:`~terminal_agent.rewards.weighted_pytest.junit_scoring`) and the Harbor verifier
mode (:mod:`~terminal_agent.rewards.harbor.ctrf_scoring`) build their per-test outcomes, mark the guards with
``TestOutcome.guard``, and both score through :func:`weighted_score` (or :func:`apply_guards` when the
verifier's reward file gives the score).
"""

from __future__ import annotations

from collections.abc import Iterable

from terminal_agent.interfaces import TestOutcome
from terminal_agent.tasks.model import GuardFailure, TestGuards


def failed_guard_names(outcomes: Iterable[TestOutcome]) -> list[str]:
    """Names of the guard outcomes that did not pass (a guard nobody reported has failed), in order."""
    return [outcome.name for outcome in outcomes if outcome.guard and not (outcome.passed and outcome.reported)]


def guard_effect(guards: TestGuards) -> str:
    """What a failed guard of ``guards`` does, in words (``score zeroed`` / ``score capped at 0.5``)."""
    return "score zeroed" if guards.on_failure is GuardFailure.ZERO else f"score capped at {guards.cap:g}"


def mark_failed_guards(outcomes: Iterable[TestOutcome], guards: TestGuards) -> None:
    """Prefix the message of every failed guard with ``guard failed (<effect>)`` so results say why."""
    for outcome in outcomes:
        if outcome.guard and not (outcome.passed and outcome.reported):
            prefix = f"guard failed ({guard_effect(guards)})"
            outcome.message = f"{prefix}: {outcome.message}" if outcome.message else prefix


def apply_guards(score: float, outcomes: list[TestOutcome], guards: TestGuards | None) -> tuple[float, list[str]]:
    """``score`` after the guards among ``outcomes``, and the names of the guards that failed.

    No guards (``None``): the score unchanged and no names. The messages of the failed guards are marked.
    """
    if guards is None:
        return score, []
    failed = failed_guard_names(outcomes)
    mark_failed_guards(outcomes, guards)
    return guards.apply(score, failed), failed


def weighted_score(outcomes: list[TestOutcome], guards: TestGuards | None) -> tuple[float, list[str]]:
    """``sum(weight * passed) / sum(weight)`` over the weighted (non-guard) outcomes, then the guards.

    A test that was not reported has not passed. Returns the score and the names of the failed guards.
    """
    weighted = [outcome for outcome in outcomes if not outcome.guard]
    total = sum(outcome.weight for outcome in weighted)
    earned = sum(outcome.weight for outcome in weighted if outcome.passed and outcome.reported)
    return apply_guards(earned / total if total > 0 else 0.0, outcomes, guards)
