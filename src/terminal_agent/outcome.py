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
* :class:`Grade` (with one :class:`TestVerdict` per test) and :class:`RewardParts` - the grade and the
  reward's parts, typed, the same records from the grader to the results files; ``to_info`` gives the dicts that
  ``info`` and the results files carry, ``from_info`` reads them back.
* :class:`EpisodeOutcome` - the whole episode: termination, reward, scored flag, grade, reward parts,
  error kind and the turns' tokens.

Every record here but :class:`Grade` is frozen: nothing changes one after it is built; a correction (the reward
of a schedule, the turns' tokens the loop adds) is a new record made with :func:`dataclasses.replace`. A grade is
filled by its grader while it grades and never changed once the env holds it. Nothing derived is stored: a
grade's ``scored`` and an outcome's :meth:`EpisodeOutcome.final_info` are computed when asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class TestVerdict:
    """One declared (or reported) test of a grade: what the grader found, what ``info`` and the results files carry."""

    name: str
    """Test function name, as the task's weights name it."""
    weight: float
    """Its weight in the task's score (0 for a guard and for a test no weight names)."""
    passed: bool
    reported: bool = True
    """False when the test runner never reported this declared test (it counts as failed)."""
    message: str = ""
    """Why it failed (the runner's message; ``guard failed (...)`` in front for a guard), empty when it passed."""
    guard: bool = False
    """A guard test (no weight): when it fails the score is zeroed or capped."""

    def to_info(self, *, with_message: bool = True) -> dict[str, Any]:
        """The JSON-safe dict of this verdict; evaluation's ``results.json`` leaves the message out."""
        info: dict[str, Any] = {"name": self.name, "weight": self.weight, "passed": self.passed,
                                "reported": self.reported}
        if with_message:
            info["message"] = self.message
        info["guard"] = self.guard
        return info

    @classmethod
    def from_info(cls, raw: Mapping[str, Any]) -> "TestVerdict":
        return cls(name=str(raw["name"]), weight=float(raw.get("weight", 0.0)), passed=bool(raw.get("passed")),
                   reported=bool(raw.get("reported", True)), message=str(raw.get("message") or ""),
                   guard=bool(raw.get("guard", False)))


@dataclass
class Grade:
    """What the grader found: the score, each test's verdict and the diagnostics beside them. ``error`` set means
    *not scored* (an infrastructure failure: mask the sample, never read it as 0).

    The one grade record from the grader to the results files: a grading mode fills it while it grades (its only
    writer; :func:`terminal_agent.rewards.grading.grade_at_boundary` adds the error and the timings), the env puts it
    in the episode's frozen :class:`EpisodeOutcome` and nothing changes it after that. :meth:`to_info` is its
    JSON-safe dict (``info["grade"]``, rLLM metadata, Harbor trial files); :meth:`from_info` reads one back.
    """

    score: float | None = None
    """Weighted test score in [0, 1] after the guards; None when not scored."""
    error: str | None = None
    """Why it was not scored."""
    error_kind: str | None = None
    """``errors.error_kind`` family of that failure (``sandbox``, ``grading``, ...)."""
    tests: list[TestVerdict] = field(default_factory=list)
    """One verdict per declared test (a tampered sandbox: every one failed and unreported)."""
    failed_guards: list[str] = field(default_factory=list)
    """Guard tests that failed or were not reported (the score was zeroed or capped)."""
    tamper_signals: list[str] = field(default_factory=list)
    """Signs the agent tampered with the interpreter or the verifier (the score is then 0)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per grading step (``kill_s``, ``inspect_s``, ``run_s``, ..., ``total_s``)."""
    duration_s: float = 0.0
    interpreter: str = ""
    """The image's python that ran the tests."""
    pycache_isolated: bool = False
    """The agent touched ``__pycache__``: the tests wrote their bytecode elsewhere."""
    path_overrides: dict[str, str] = field(default_factory=dict)
    """Shadowed program name -> the image's program the tests ran instead (see ``find_path_shadowing``)."""
    agent_processes: str = ""
    """``kept`` (frozen while the grader prepared, running while the tests ran) or ``killed`` before the tests
    (``rewards/agent_processes.py``)."""
    agent_processes_kept: int = 0
    """How many of the agent's processes ran beside the tests (its idle shell counts)."""
    log_tail: str = ""
    """The test run's output tail (the Harbor trial's ``verifier/test-stdout.txt``)."""
    verifier: dict[str, Any] = field(default_factory=dict)
    """The grading mode's own facts (the Harbor mode: ``mode``, ``rewards``, ``reward_source``, ``runtime``,
    ``verifier_network``, ...); the dicts carry them at the top level."""

    @property
    def scored(self) -> bool:
        return self.error is None and self.score is not None

    def to_info(self) -> dict[str, Any]:
        """The JSON-safe dict ``info["grade"]`` and the results files carry."""
        return {
            **self.verifier,
            "scored": self.scored,
            "score": self.score,
            "error": self.error,
            "error_kind": self.error_kind,
            "tests": [t.to_info() for t in self.tests],
            "failed_guards": list(self.failed_guards),
            "tamper_signals": list(self.tamper_signals),
            "timings": dict(self.timings),
            "duration_s": self.duration_s,
            "interpreter": self.interpreter,
            "pycache_isolated": self.pycache_isolated,
            "path_overrides": dict(self.path_overrides),
            "agent_processes": self.agent_processes,
            "agent_processes_kept": self.agent_processes_kept,
            "log_tail": self.log_tail,
        }

    @classmethod
    def from_info(cls, raw: Mapping[str, Any]) -> "Grade":
        """The record of a ``to_info`` dict, or of a grade as transcripts store it (its fields, the mode's facts
        under ``verifier``); an older file may lack fields: they take their defaults. ``scored`` is derived (older
        dicts carry it: it always agreed with ``score`` and ``error``)."""
        score = raw.get("score")
        nested = raw.get("verifier")
        return cls(
            score=float(score) if score is not None else None,
            error=raw.get("error"),
            error_kind=raw.get("error_kind"),
            tests=[TestVerdict.from_info(t) for t in raw.get("tests") or ()],
            failed_guards=list(raw.get("failed_guards") or ()),
            tamper_signals=list(raw.get("tamper_signals") or ()),
            timings=dict(raw.get("timings") or {}),
            duration_s=float(raw.get("duration_s") or 0.0),
            interpreter=str(raw.get("interpreter") or ""),
            pycache_isolated=bool(raw.get("pycache_isolated", False)),
            path_overrides=dict(raw.get("path_overrides") or {}),
            agent_processes=str(raw.get("agent_processes") or ""),
            agent_processes_kept=int(raw.get("agent_processes_kept") or 0),
            log_tail=str(raw.get("log_tail") or ""),
            verifier=dict(nested) if isinstance(nested, Mapping)
            else {key: value for key, value in raw.items() if key not in _GRADE_KEYS},
        )


_GRADE_KEYS = frozenset([*(f for f in Grade.__dataclass_fields__ if f != "verifier"), "scored"])


@dataclass(frozen=True)
class RewardParts:
    """How the reward was put together from the tests and the judge."""

    test_score: float | None = None
    judge_score: float | None = None
    judge_scored: bool | None = None
    """None when the judge is off."""
    judge_weight: float = 0.0
    """The judge weight the reward was computed with (0 when the judge was off or failed)."""
    notes: tuple[str, ...] = ()
    """Why a policy changed the reward (a tamper zero, a judge fallback)."""

    def to_info(self) -> dict[str, Any]:
        """The keys ``info`` carries (the test score is the verdict's own ``test_score``)."""
        return {"judge_score": self.judge_score, "judge_scored": self.judge_scored, "judge_weight": self.judge_weight,
                "reward_notes": list(self.notes)}


@dataclass(frozen=True)
class EpisodeOutcome:
    """Everything a consumer (eval, screening, a trainer) needs to know about one finished episode. Frozen: a
    correction is a new record (``dataclasses.replace``)."""

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
    turn_tokens: tuple[TurnTokens, ...] = ()
    """One entry per model call, in order (empty when the client gives no token ids)."""
    grade: Grade | None = None
    """The grader's record (None when the episode never reached the grader)."""
    reward_parts: RewardParts | None = None
    """How the reward was combined (None when the episode never reached the grader)."""
    episode_id: str | None = None
    """The env's id of this episode (also in ``reset()``'s info)."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """Facts beside the verdict, for logs and the judge schedule: timings (``grading_s``, ``env_s``) and the judge's
    fields. Read-only by contract, like the whole record."""

    def __post_init__(self) -> None:
        # frozen: the normalizations below are the constructor's own, before anyone sees the record
        object.__setattr__(self, "termination", Termination.parse(self.termination))
        if not isinstance(self.turn_tokens, tuple):
            object.__setattr__(self, "turn_tokens", tuple(self.turn_tokens))
        if isinstance(self.grade, Mapping):  # a grade read back from a dict (results files, rLLM metadata)
            object.__setattr__(self, "grade", Grade.from_info(self.grade))
        if self.termination.is_infrastructure and self.scored:
            raise ValueError(f"an episode ended by {self.termination.value} cannot be scored")

    @property
    def trainable(self) -> bool:
        """True when a trainer may use this sample (scored; infrastructure failures are masked)."""
        return self.scored and self.reward is not None

    @property
    def tests(self) -> tuple[TestVerdict, ...]:
        """The grade's test verdicts (empty when not graded)."""
        return tuple(self.grade.tests) if self.grade is not None else ()

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
        """The env's final ``info``: the details, the reward's parts, then the verdict (which neither overrides),
        ``steps``, ``grade``, ``episode_id`` and ``tamper`` (only when tampered; the judge schedule reads it)."""
        parts = self.reward_parts.to_info() if self.reward_parts is not None else {}
        info: dict[str, Any] = {**self.details, **parts, **self.to_info(), "steps": self.turns}
        if self.grade is not None:
            info["grade"] = self.grade.to_info()
        if self.episode_id is not None:
            info["episode_id"] = self.episode_id
        if self.tampered:
            info["tamper"] = True
        return info


def with_turn_tokens(outcome: EpisodeOutcome, turn_tokens: Sequence[TurnTokens]) -> EpisodeOutcome:
    """``outcome`` with the turns' token ids the episode loop captured (the env never sees them)."""
    return replace(outcome, turn_tokens=tuple(turn_tokens))


__all__ = ["EpisodeOutcome", "Grade", "RewardParts", "Termination", "TestVerdict", "TurnTokens", "with_turn_tokens"]
