"""Turning what an episode left behind (an EpisodeResult, an exception, a blown wall clock) into a TrialResult.

A broken rollout is data: it becomes an ``error`` trial with its kind, never a reward of 0. Every trial's
``termination_reason`` is the episode's :class:`~terminal_agent.outcome.Termination`.
"""

from __future__ import annotations

from typing import Any

from terminal_agent.errors import error_kind
from terminal_agent.outcome import Termination
from terminal_agent.rollout.metered_model import MeteredModel
from terminal_agent.evaluation.results import TestRecord, TrialError, TrialResult


def trial_from_episode(task_id: str, attempt: int, episode: Any) -> TrialResult:
    """Turn an :class:`~terminal_agent.rollout.episode.EpisodeResult` into a :class:`TrialResult`.

    Not scored (``error``) when the episode says so: a sandbox, provider or grading failure.
    """
    grade = episode.grade or {}
    tests = [
        TestRecord(name=t["name"], weight=t["weight"], passed=t["passed"], reported=t.get("reported", True),
                   guard=t.get("guard", False))
        for t in grade.get("tests", []) or []
    ]
    error = None
    if not episode.scored:
        kind = episode.error_kind or grade.get("error_kind") or "grading"
        message = episode.error or grade.get("error") or f"episode ended ({episode.termination}) without a score"
        error = TrialError(kind=str(kind), message=str(message))
    return TrialResult(
        task_id=task_id,
        attempt=attempt,
        status="scored" if episode.scored else "error",
        reward=float(episode.reward) if episode.scored else None,
        tests=tests,
        turns=int(episode.turns),
        prompt_tokens=int(episode.prompt_tokens),
        completion_tokens=int(episode.completion_tokens),
        termination_reason=Termination.parse(episode.termination),
        env_time_s=float(episode.env_s or 0.0),
        error=error,
    )


def trial_from_exception(task_id: str, attempt: int, exc: BaseException) -> TrialResult:
    """An ``error`` trial for an exception that escaped the episode, classified by :func:`error_kind`.

    The agent handles the model's format errors itself, so one escaping here is ``internal`` (a bug).
    """
    kind = error_kind(exc)
    if kind == "format":
        kind = "internal"
    return TrialResult(
        task_id=task_id,
        attempt=attempt,
        status="error",
        termination_reason=Termination.for_error_kind(kind),
        error=TrialError(kind=kind, message=f"{type(exc).__name__}: {exc}"),
    )


def wall_clock_trial(task_id: str, attempt: int, deadline_s: float, wall_s: float) -> TrialResult:
    """A ``timeout`` error trial for an episode that passed its wall clock of ``deadline_s``."""
    return TrialResult(
        task_id=task_id,
        attempt=attempt,
        status="error",
        termination_reason=Termination.EPISODE_TIMEOUT,
        error=TrialError(kind="timeout", message=f"episode passed its wall clock of {deadline_s:.0f} s"),
        wall_s=wall_s,
    )


def fill_model_metrics(trial: TrialResult, metered: MeteredModel) -> None:
    """Model time and queueing from the metered calls; turns and tokens too when the episode did not count them."""
    trial.model_time_s = metered.model_time_s
    trial.model_wait_s = metered.wait_time_s
    if trial.turns == 0:
        trial.turns = len(metered.calls)
    if trial.prompt_tokens == 0 and trial.completion_tokens == 0:
        trial.prompt_tokens = metered.prompt_tokens
        trial.completion_tokens = metered.completion_tokens
