"""Evaluation's trials as views of the engine's episode records.

A broken rollout is data: it becomes an ``error`` trial with its kind, never a reward of 0. Every trial's
``termination_reason`` is the episode's :class:`~terminal_agent.outcome.Termination`.
"""

from __future__ import annotations

from terminal_agent.evaluation.results import TrialError, TrialResult
from terminal_agent.outcome import EpisodeOutcome
from terminal_agent.rollout.episode_record import EpisodeRecord


def trial_from_record(record: EpisodeRecord) -> TrialResult:
    """The :class:`TrialResult` of one engine record: not scored (``error``) when the episode says so (a sandbox,
    provider or grading failure, the wall clock)."""
    outcome = record.outcome
    trial = trial_from_outcome(outcome, record.attempt)
    trial.prompt_tokens = record.prompt_tokens
    trial.completion_tokens = record.completion_tokens
    trial.model_time_s = record.model_s
    trial.model_wait_s = record.model_wait_s
    trial.wall_s = record.wall_s
    trial.turns = outcome.turns or len(record.texts)
    trial.env_time_s = record.env_s if record.env_s > 0 else max(0.0, record.wall_s - record.model_s - record.model_wait_s)
    return trial


def trial_from_outcome(outcome: EpisodeOutcome, attempt: int) -> TrialResult:
    """The verdict part of a trial (tests, reward, termination, error) from an outcome alone."""
    grade = outcome.grade
    error = None
    if not outcome.scored:
        kind = outcome.error_kind or (grade.error_kind if grade is not None else None) or "grading"
        message = (outcome.error or (grade.error if grade is not None else None)
                   or f"episode ended ({outcome.termination.value}) without a score")
        error = TrialError(kind=str(kind), message=str(message))
    return TrialResult(
        task_id=outcome.task_id,
        attempt=attempt,
        status="scored" if outcome.scored else "error",
        reward=float(outcome.reward) if outcome.scored and outcome.reward is not None else None,
        tests=list(outcome.tests),
        turns=outcome.turns,
        termination_reason=outcome.termination,
        error=error,
    )
