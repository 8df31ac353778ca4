"""Reward = tests (+ optional judge), with a documented policy for every unscored part.

``reward = (w_test * tests + w_judge * judge) / (w_test + w_judge)``; with the judge off (default)
the reward is the weighted test score. Named presets (:data:`REWARD_PRESETS`): ``tests_only``
(the default) and ``tests_and_judge`` (0.65 tests, 0.35 judge, the seed project's mix). A
``judge_schedule`` makes the judge weight a function of the training step
(:func:`reward_at_step`, which the trainers call).

Policies:

* grading not scored (grader crash/timeout, sandbox broken) -> the sample is not scored
  (``scored=False``; ``reward`` is None and the env hands rLLM 0.0 with ``info["scored"] = False``
  so the trainer masks it);
* tamper signals -> reward 0, whatever the judge says;
* judge failure -> ``judge_failure_policy``: ``tests_only`` (default: the reward is the test score
  alone, ``info["judge_scored"] = False``) or ``unscored`` (the whole sample is not scored).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from terminal_agent.errors import ConfigError
from terminal_agent.outcome import Grade, RewardParts
from terminal_agent.rewards.reward_schedule import JudgeWeightSchedule, judge_weight_at


class RewardConfig(BaseModel):
    """How test score and judge score combine into one reward."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True)

    test_weight: float = Field(1.0, ge=0.0)
    """Weight of the weighted test score."""
    judge_weight: float = Field(0.0, ge=0.0)
    """Weight of the judge's score; 0 (default) turns the judge off."""
    judge_failure_policy: Literal["tests_only", "unscored"] = "tests_only"
    """What a failed judge does: fall back to the test score alone, or mark the sample not scored."""
    judge_schedule: JudgeWeightSchedule | None = None
    """Judge weight by training step (trainers apply it with :func:`reward_at_step`); ``None``: ``judge_weight`` throughout."""

    @model_validator(mode="after")
    def _some_weight(self) -> "RewardConfig":
        if self.test_weight + self.judge_weight <= 0:
            raise ValueError("test_weight and judge_weight are both 0: nothing would be rewarded")
        return self

    @property
    def judge_enabled(self) -> bool:
        """True when the judge must be asked: a positive weight now or anywhere in the schedule."""
        schedule = self.judge_schedule
        return self.judge_weight > 0 or (schedule is not None and max(schedule.start_weight, schedule.end_weight) > 0)

    @classmethod
    def seed_weights(cls) -> "RewardConfig":
        """The seed project's mix: 0.65 tests, 0.35 judge (the ``tests_and_judge`` preset)."""
        return cls.preset("tests_and_judge")

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> "RewardConfig":
        """A named preset of :data:`REWARD_PRESETS`, with ``overrides`` on top."""
        if name not in REWARD_PRESETS:
            raise ConfigError(f"unknown reward preset {name!r}; valid: {', '.join(sorted(REWARD_PRESETS))}")
        return cls.model_validate({**REWARD_PRESETS[name], **overrides})

    def judge_weight_at(self, step: int | None) -> float:
        """The judge weight at training ``step`` (the schedule's, else ``judge_weight``)."""
        if self.judge_schedule is None or step is None:
            return self.judge_weight
        return judge_weight_at(self.judge_schedule, step)


REWARD_PRESETS: dict[str, dict[str, Any]] = {
    "tests_only": {"test_weight": 1.0, "judge_weight": 0.0},
    "tests_and_judge": {"test_weight": 0.65, "judge_weight": 0.35},
}
"""Named reward mixes (data): ``RewardConfig.preset(name)``."""


@dataclass
class RewardOutcome:
    reward: float | None
    """None when the sample is not scored."""
    scored: bool
    test_score: float | None
    judge_score: float | None = None
    judge_scored: bool | None = None
    """None when the judge is off."""
    notes: list[str] = field(default_factory=list)
    judge_weight: float = 0.0
    """The judge weight this reward was computed with (0 when the judge was off or failed)."""

    def parts(self) -> RewardParts:
        """How this reward was combined, as the episode's typed record carries it."""
        return RewardParts(test_score=self.test_score, judge_score=self.judge_score, judge_scored=self.judge_scored,
                           judge_weight=self.judge_weight, notes=tuple(self.notes))

    def to_info(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "scored": self.scored,
            "test_score": self.test_score,
            "judge_score": self.judge_score,
            "judge_scored": self.judge_scored,
            "judge_weight": self.judge_weight,
            "reward_notes": list(self.notes),
        }


def combine_reward(
    grade: Grade,
    config: RewardConfig | None = None,
    judge_score: float | None = None,
    judge_error: str | None = None,
    *,
    judge_weight: float | None = None,
) -> RewardOutcome:
    """Apply the weights and the policies above; ``judge_weight`` overrides the config's (hot switch)."""
    config = config or RewardConfig()
    if judge_weight is not None:
        config = config.model_copy(update={"judge_weight": float(judge_weight)})
    if not grade.scored:
        return RewardOutcome(None, False, None, notes=[f"tests not scored: {grade.error}"])
    tests = float(grade.score)  # type: ignore[arg-type]
    if grade.tamper_signals:
        return RewardOutcome(0.0, True, tests, notes=["tamper signals: reward 0"])
    if not config.judge_enabled:
        return RewardOutcome(tests, True, tests)
    if judge_score is None:
        note = f"judge not scored: {judge_error or 'no judge result'}"
        if config.judge_failure_policy == "unscored":
            return RewardOutcome(None, False, tests, None, False, [note, "policy unscored: sample not scored"])
        return RewardOutcome(tests, True, tests, None, False, [note, "policy tests_only: reward = test score"])
    reward = combine_scores(tests, judge_score, config.test_weight, config.judge_weight)
    return RewardOutcome(reward, True, tests, judge_score, True, judge_weight=config.judge_weight)


def combine_scores(test_score: float, judge_score: float | None, test_weight: float, judge_weight: float) -> float:
    """``(w_test * tests + w_judge * judge) / (w_test + w_judge)``; the test score alone without a judge score."""
    if judge_score is None or judge_weight <= 0:
        return test_score
    total = test_weight + judge_weight
    if total <= 0:
        raise ConfigError("test_weight and judge_weight are both 0: nothing would be rewarded")
    return (test_weight * test_score + judge_weight * judge_score) / total


def reward_at_step(info: Mapping[str, Any], config: RewardConfig, step: int) -> float | None:
    """An episode's reward recombined with the judge weight of training ``step``.

    ``info`` is what the env recorded (``scored``, ``test_score``, ``judge_score``, ``tamper``,
    ``reward``). Not scored -> None (mask it); tampered -> 0; no judge score (off, failed and
    fallen back to tests) -> the test score; otherwise the weights of ``config`` with the
    schedule's judge weight. Without a schedule the recorded reward is returned unchanged.
    """
    if not info.get("scored", False):
        return None
    if config.judge_schedule is None:
        recorded = info.get("reward")
        return None if recorded is None else float(recorded)
    if info.get("tamper"):
        return 0.0
    test_score = info.get("test_score")
    if test_score is None:
        return None
    return combine_scores(float(test_score), info.get("judge_score"), config.test_weight, config.judge_weight_at(step))
