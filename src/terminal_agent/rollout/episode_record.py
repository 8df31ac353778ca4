"""The one record of an episode that the engine returns: the env's verdict plus what only the loop and the client saw.

Evaluation's trials (:mod:`terminal_agent.rollout.trial_records`), the local trainer's groups and the rLLM
Workflow's steps are views of it. Frozen, like the :class:`~terminal_agent.outcome.EpisodeOutcome` inside it: a
correction (a rescheduled reward) is a new record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from terminal_agent.interfaces import ModelResponse
from terminal_agent.outcome import EpisodeOutcome, Grade, Termination


@dataclass(frozen=True)
class ModelCall:
    """One model call as the transcript records it (its fields, in this order)."""

    messages: tuple[dict[str, str], ...]
    """The chat as sent (copies: the agent's chat grows after the call)."""
    response: ModelResponse | None
    """None when the call raised."""
    latency_s: float
    wait_s: float
    """Time queued for a client that serves one call at a time."""
    error: str | None = None


@dataclass(frozen=True)
class EpisodeRecord:
    """One attempt of one task: its typed outcome, the model and env timings, and the agent's trajectory."""

    outcome: EpisodeOutcome
    """How it ended (termination, scored, reward, grade, error kind, the turns' token ids)."""
    attempt: int = 0
    """Which attempt of the task this is (evaluation's ``attempts``, the trainer's group index)."""
    texts: tuple[str, ...] = ()
    """The reply text of each model call (what the chat shows; the turns' tokens decode to it)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_s: float = 0.0
    """Seconds in model calls (queueing excluded)."""
    model_wait_s: float = 0.0
    """Seconds model calls waited for a client that serves one call at a time."""
    env_s: float = 0.0
    """Seconds in the env (reset, steps, grading)."""
    wall_s: float = 0.0
    """The attempt's whole wall clock."""
    first_call_at: float | None = None
    """``time.monotonic()`` of the first model call (None: the episode made none)."""
    last_reply_at: float | None = None
    """``time.monotonic()`` of the last reply."""
    model_calls: tuple[ModelCall, ...] = ()
    """Every call, in order (kept when the engine is asked to: transcripts)."""
    trajectory: Any = None
    """The agent's rLLM ``Trajectory`` (None when the agent never started)."""
    final_observation: str | None = None
    """What the env answered to the last reply (a trajectory keeps each reply's preceding observation only)."""
    retries: int = 0
    """Attempts made before this one and thrown away for a retryable infrastructure error."""

    # --- views of the outcome ---------------------------------------------------------------
    @property
    def task_id(self) -> str:
        return self.outcome.task_id

    @property
    def reward(self) -> float:
        """The reward; 0.0 when not scored (check ``scored`` first)."""
        return float(self.outcome.reward) if self.outcome.scored and self.outcome.reward is not None else 0.0

    @property
    def scored(self) -> bool:
        return self.outcome.scored

    @property
    def termination(self) -> Termination:
        return self.outcome.termination

    @property
    def turns(self) -> int:
        return self.outcome.turns

    @property
    def grade(self) -> Grade | None:
        return self.outcome.grade

    @property
    def error(self) -> str | None:
        return self.outcome.error

    @property
    def error_kind(self) -> str | None:
        return self.outcome.error_kind

    @property
    def info(self) -> dict[str, Any]:
        """The env's final info (grade, reward parts, timings)."""
        return self.outcome.final_info()

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def total_s(self) -> float:
        return self.wall_s


__all__ = ["EpisodeRecord", "ModelCall"]
