"""Reward = tests (+ optional judge), with a documented policy for every unscored part.

``reward = (w_test * tests + w_judge * judge) / (w_test + w_judge)``; with the judge off (default)
the reward is the weighted test score. The seed project used ``w_test=0.65, w_judge=0.35``.

Policies:

* grading not scored (grader crash/timeout, sandbox broken) -> the sample is not scored
  (``scored=False``; ``reward`` is None and the env hands rLLM 0.0 with ``info["scored"] = False``
  so the trainer masks it);
* tamper signals -> reward 0, whatever the judge says;
* judge failure -> ``judge_failure_policy``: ``tests_only`` (default: the reward is the test score
  alone, ``info["judge_scored"] = False``) or ``unscored`` (the whole sample is not scored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from terminal_agent.interfaces import GradeResult


class RewardConfig(BaseModel):
    """How test score and judge score combine into one reward."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    test_weight: float = Field(1.0, ge=0.0)
    """Weight of the weighted test score."""
    judge_weight: float = Field(0.0, ge=0.0)
    """Weight of the judge's score; 0 (default) turns the judge off."""
    judge_failure_policy: Literal["tests_only", "unscored"] = "tests_only"
    """What a failed judge does: fall back to the test score alone, or mark the sample not scored."""

    @model_validator(mode="after")
    def _some_weight(self) -> "RewardConfig":
        if self.test_weight + self.judge_weight <= 0:
            raise ValueError("test_weight and judge_weight are both 0: nothing would be rewarded")
        return self

    @property
    def judge_enabled(self) -> bool:
        return self.judge_weight > 0

    @classmethod
    def seed_weights(cls) -> "RewardConfig":
        """The seed project's mix: 0.65 tests, 0.35 judge."""
        return cls(test_weight=0.65, judge_weight=0.35)


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

    def to_info(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "scored": self.scored,
            "test_score": self.test_score,
            "judge_score": self.judge_score,
            "judge_scored": self.judge_scored,
            "reward_notes": list(self.notes),
        }


def combine_reward(
    grade: GradeResult,
    config: RewardConfig | None = None,
    judge_score: float | None = None,
    judge_error: str | None = None,
) -> RewardOutcome:
    """Apply the weights and the policies above."""
    config = config or RewardConfig()
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
    total = config.test_weight + config.judge_weight
    reward = (config.test_weight * tests + config.judge_weight * judge_score) / total
    return RewardOutcome(reward, True, tests, judge_score, True)
