"""The one scoring rule of both grading modes: the weighted share of passed tests, then the task's guards.

A guard test ("the inputs are unchanged", "nothing else was touched") earns nothing by itself; when one failed
or was never reported, the score is zeroed or capped (:class:`~terminal_agent.tasks.model.TestGuards`). The
weighted pytest grader (:mod:`~terminal_agent.rewards.weighted_pytest.junit_scoring`) and the Harbor verifier
mode (:mod:`~terminal_agent.rewards.harbor.ctrf_scoring`) build their per-test verdicts, mark the guards with
``TestVerdict.guard``, and both score through :func:`weighted_score` (or :func:`apply_guards` when the
verifier's reward file gives the score).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from terminal_agent.outcome import TestVerdict
from terminal_agent.tasks.model import GuardFailure, TestGuards


def failed_guard_names(outcomes: Iterable[TestVerdict]) -> list[str]:
    """Names of the guard outcomes that did not pass (a guard nobody reported has failed), in order."""
    return [outcome.name for outcome in outcomes if outcome.guard and not (outcome.passed and outcome.reported)]


def guard_effect(guards: TestGuards) -> str:
    """What a failed guard of ``guards`` does, in words (``score zeroed`` / ``score capped at 0.5``)."""
    return "score zeroed" if guards.on_failure is GuardFailure.ZERO else f"score capped at {guards.cap:g}"


def mark_failed_guards(outcomes: Iterable[TestVerdict], guards: TestGuards) -> list[TestVerdict]:
    """The verdicts with the message of every failed guard prefixed by ``guard failed (<effect>)``, so results say
    why (the others unchanged)."""
    marked = []
    for outcome in outcomes:
        if outcome.guard and not (outcome.passed and outcome.reported):
            prefix = f"guard failed ({guard_effect(guards)})"
            message = f"{prefix}: {outcome.message}" if outcome.message else prefix
            outcome = dataclasses.replace(outcome, message=message)
        marked.append(outcome)
    return marked


def apply_guards(score: float, outcomes: list[TestVerdict],
                 guards: TestGuards | None) -> tuple[float, list[TestVerdict]]:
    """``score`` after the guards among ``outcomes``, and the verdicts with the failed guards' messages marked
    (their names: :func:`failed_guard_names`).

    No guards (``None``): the score and the verdicts unchanged.
    """
    if guards is None:
        return score, list(outcomes)
    return guards.apply(score, failed_guard_names(outcomes)), mark_failed_guards(outcomes, guards)


def weighted_score(outcomes: list[TestVerdict], guards: TestGuards | None) -> tuple[float, list[TestVerdict]]:
    """``sum(weight * passed) / sum(weight)`` over the weighted (non-guard) outcomes, then the guards.

    A test that was not reported has not passed. Returns the score and the verdicts with the failed guards marked.
    """
    weighted = [outcome for outcome in outcomes if not outcome.guard]
    total = sum(outcome.weight for outcome in weighted)
    earned = sum(outcome.weight for outcome in weighted if outcome.passed and outcome.reported)
    return apply_guards(earned / total if total > 0 else 0.0, outcomes, guards)
