"""The judge weight as a function of the training step.

A judge is most useful early (it shapes *how* the agent works while test rewards are still
sparse) and a liability late (the policy learns to please it). A schedule anneals its weight::

    schedule = JudgeWeightSchedule(kind="linear", start_weight=0.35, end_weight=0.0, steps=200)
    judge_weight_at(schedule, 0)    # 0.35
    judge_weight_at(schedule, 100)  # 0.175
    judge_weight_at(schedule, 500)  # 0.0

Both trainers call :func:`judge_weight_at` with their global step, then
:func:`terminal_agent.rewards.reward.reward_at_step` to recombine an episode's recorded test and
judge scores with that weight. The test weight stays what the config says.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class JudgeWeightSchedule(BaseModel):
    """How the judge weight moves from ``start_weight`` to ``end_weight`` over training steps."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: Literal["constant", "linear", "cosine", "step"] = "linear"
    """``constant`` (always ``start_weight``), ``linear`` or ``cosine`` anneal over ``steps``, or ``step`` (a drop at the end)."""
    start_weight: float = Field(0.35, ge=0.0)
    """Judge weight up to ``start_step``."""
    end_weight: float = Field(0.0, ge=0.0)
    """Judge weight from ``start_step + steps`` on."""
    start_step: int = Field(0, ge=0)
    """Training step at which the change begins."""
    steps: int = Field(100, ge=1)
    """Length of the change in training steps."""

    @model_validator(mode="after")
    def _constant_has_no_end(self) -> "JudgeWeightSchedule":
        if self.kind == "constant" and "end_weight" in self.model_fields_set and self.end_weight != self.start_weight:
            raise ValueError("a constant schedule has one weight: set start_weight only")
        return self


def judge_weight_at(schedule: JudgeWeightSchedule, step: int) -> float:
    """The judge weight at training ``step`` (0-based; negative steps count as 0)."""
    if schedule.kind == "constant":
        return schedule.start_weight
    progress = (max(0, step) - schedule.start_step) / schedule.steps
    if progress <= 0:
        return schedule.start_weight
    if progress >= 1:
        return schedule.end_weight
    span = schedule.start_weight - schedule.end_weight
    if schedule.kind == "linear":
        return schedule.end_weight + span * (1.0 - progress)
    if schedule.kind == "cosine":
        return schedule.end_weight + span * 0.5 * (1.0 + math.cos(math.pi * progress))
    return schedule.start_weight  # "step": unchanged until the end of the window


__all__ = ["JudgeWeightSchedule", "judge_weight_at"]
