"""How an episode ended, as typed records shared by the env, the episode loop, eval and both trainers.

The env builds the :class:`EpisodeOutcome` of every ending first (graded, unscored, never started), and
every dict that leaves it is derived from that record here, in one place: :meth:`EpisodeOutcome.to_info`
(the flat verdict for rLLM step metadata) and :meth:`EpisodeOutcome.final_info` (the env's final ``info``,
what rLLM's engines and the logs see). The episode loop adds only what the env cannot know (the turns'
token ids) and never rewrites the env's verdict. Consumers read the same fields instead of poking at dicts:

* :class:`Termination` - why the episode stopped. ``is_infrastructure`` tells the trainers which
  endings are *not* the model's doing: those samples are masked, never trained on as reward 0.
* :class:`TurnTokens` - the exact token ids of one model call (prompt, completion, per-token
  logprobs, finish reason), so trainers never re-tokenize text.
* :class:`EpisodeOutcome` - the whole episode: termination, reward, scored flag, grade summary,
  error kind and the turns' tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Termination(str, Enum):
    """Why an episode ended. The value is what results files and ``info["termination"]`` carry."""

    FINISHED = "finished"
    """The agent called ``finish``."""
    FORMAT_ERRORS = "format_errors"
    """Too many replies in a row with no runnable action."""
    MAX_STEPS = "max_steps"
    """The env's own step budget ran out."""
    TRUNCATED = "truncated"
    """The engine cut the episode (its turn budget) and asked for the final reward."""
    MAX_TOKENS = "max_tokens"
    """The episode's total token budget ran out."""
    OUTPUT_LIMIT = "output_limit"
    """A reply hit the per-response token cap and the engine stopped the episode there."""
    CONTEXT_LIMIT = "context_limit"
    """The prompt outgrew the context window after at least one turn."""
    AGENT_TIMEOUT = "agent_timeout"
    """The task's wall-clock budget for the agent passed."""
    EPISODE_TIMEOUT = "episode_timeout"
    """The runner's (or rLLM's) wall clock for the whole episode passed."""
    STORAGE_LIMIT = "storage_limit"
    """The sandbox's writable layer outgrew the task's disk quota (``limits.storage_mb``, measured at a turn's end):
    the agent's doing, like running out of memory. The episode is graded as it stands."""
    SANDBOX_ERROR = "sandbox_error"
    """The sandbox broke (dead container, lost shell). Infrastructure."""
    IMAGE_ERROR = "image_error"
    """The task image could not be built or found. Infrastructure."""
    PROVIDER_ERROR = "provider_error"
    """The model endpoint failed. Infrastructure."""
    GRADING_ERROR = "grading_error"
    """The grader crashed or timed out. Infrastructure."""
    JUDGE_ERROR = "judge_error"
    """The judge failed and the policy says not to fall back. Infrastructure."""
    NOT_STARTED = "not_started"
    """No episode ran (reset never succeeded). Infrastructure."""
    INTERNAL_ERROR = "internal_error"
    """A bug of ours escaped; never the model's fault."""

    @property
    def is_infrastructure(self) -> bool:
        """True when this ending says nothing about the model: the sample must be masked."""
        return self in _INFRASTRUCTURE

    @classmethod
    def for_error_kind(cls, kind: str | None) -> "Termination":
        """The termination of an episode ended by an error of ``errors.error_kind`` family ``kind``."""
        return _BY_ERROR_KIND.get(kind or "", cls.INTERNAL_ERROR)

    @classmethod
    def from_legacy(cls, value: str, error_kind: str | None = None) -> "Termination":
        """A ``termination_reason`` as old ``results.json`` files wrote it: an enum value, or one of the
        strings used before the enum (``error`` with the trial's error kind, ``wall_clock``, empty)."""
        if value == "wall_clock":
            return cls.EPISODE_TIMEOUT
        if value in ("error", ""):
            return cls.for_error_kind(error_kind)
        return cls.parse(value)

    @classmethod
    def parse(cls, value: "str | Termination | None") -> "Termination":
        """``value`` as a Termination; an unknown string is a ValueError naming the valid ones."""
        if isinstance(value, Termination):
            return value
        try:
            return cls(value)
        except ValueError:
            valid = ", ".join(t.value for t in cls)
            raise ValueError(f"unknown termination {value!r}; valid: {valid}") from None


_INFRASTRUCTURE = frozenset(
    {
        Termination.SANDBOX_ERROR,
        Termination.IMAGE_ERROR,
        Termination.PROVIDER_ERROR,
        Termination.GRADING_ERROR,
        Termination.JUDGE_ERROR,
        Termination.NOT_STARTED,
        Termination.INTERNAL_ERROR,
    }
)
_BY_ERROR_KIND = {
    "sandbox": Termination.SANDBOX_ERROR,
    "infrastructure": Termination.SANDBOX_ERROR,
    "image": Termination.IMAGE_ERROR,
    "provider": Termination.PROVIDER_ERROR,
    "grading": Termination.GRADING_ERROR,
    "judge": Termination.JUDGE_ERROR,
}


@dataclass
class TurnTokens:
    """The tokens of one model call, exactly as sampled."""

    prompt_ids: list[int]
    """The rendered prompt the model saw."""
    completion_ids: list[int]
    """What the model sampled (before any text-level cut)."""
    logprobs: list[float] | None = None
    """Per-token sampling logprobs of ``completion_ids`` (None when the provider gives none)."""
    finish_reason: str = "stop"
    """``stop`` or ``length``."""

    def __post_init__(self) -> None:
        if self.logprobs is not None and len(self.logprobs) != len(self.completion_ids):
            raise ValueError(
                f"TurnTokens: {len(self.logprobs)} logprobs for {len(self.completion_ids)} completion ids"
            )


@dataclass
class EpisodeOutcome:
    """Everything a consumer (eval, screening, a trainer) needs to know about one finished episode."""

    task_id: str
    termination: Termination
    scored: bool
    """False when the episode could not be scored (infrastructure): mask it, never read ``reward`` as 0."""
    reward: float | None
    """The combined reward (tests, optional judge); None when not scored."""
    test_score: float | None = None
    """Weighted test score in [0, 1]; None when the grader did not score."""
    error_kind: str | None = None
    """``errors.error_kind`` family of what stopped scoring (``sandbox``, ``grading``, ...)."""
    error: str | None = None
    """Human-readable cause when not scored."""
    tampered: bool = False
    """The grader saw tampering (reward is 0 on purpose; this is scored)."""
    turns: int = 0
    """Model replies executed."""
    turn_tokens: list[TurnTokens] = field(default_factory=list)
    """One entry per model call, in order (empty when the client gives no token ids)."""
    grade: dict[str, Any] | None = None
    """The grader's summary (``DetailedGradeResult.to_info()``)."""
    episode_id: str | None = None
    """The env's id of this episode (also in ``reset()``'s info)."""
    details: dict[str, Any] = field(default_factory=dict)
    """Facts beside the verdict, for logs and the judge schedule: timings (``grading_s``, ``env_s``), the
    reward's parts (``judge_score``, ``judge_weight``, ``reward_notes``) and the judge's fields."""
    info: dict[str, Any] = field(default_factory=dict)
    """The final info dict; empty at construction means :meth:`final_info` of this record."""

    def __post_init__(self) -> None:
        self.termination = Termination.parse(self.termination)
        if self.termination.is_infrastructure and self.scored:
            raise ValueError(f"an episode ended by {self.termination.value} cannot be scored")
        if not self.info:
            self.info = self.final_info()

    @property
    def trainable(self) -> bool:
        """True when a trainer may use this sample (scored; infrastructure failures are masked)."""
        return self.scored and self.reward is not None

    def to_info(self) -> dict[str, Any]:
        """Flat, JSON-safe fields for ``info`` dicts and rLLM step metadata."""
        return {
            "termination": self.termination.value,
            "scored": self.scored,
            "reward": self.reward,
            "test_score": self.test_score,
            "error_kind": self.error_kind,
            "error": self.error,
            "tampered": self.tampered,
            "turns": self.turns,
        }

    def final_info(self) -> dict[str, Any]:
        """The env's final ``info``: the details, then the verdict (which a detail never overrides),
        ``steps``, ``grade``, ``episode_id`` and ``tamper`` (only when tampered; the judge schedule reads it)."""
        info: dict[str, Any] = {**self.details, **self.to_info(), "steps": self.turns}
        if self.grade is not None:
            info["grade"] = self.grade
        if self.episode_id is not None:
            info["episode_id"] = self.episode_id
        if self.tampered:
            info["tamper"] = True
        return info


__all__ = ["EpisodeOutcome", "Termination", "TurnTokens"]
