"""Group-relative advantage estimators: one registry, one signature, one module per estimator.

Every estimator takes the scalar rewards of each group (one 1-D float64 array per task, one entry
per trajectory) and returns one advantage per trajectory, aligned with the input:

    estimator(group_rewards: list[np.ndarray], *, norm_by_std: bool, epsilon: float) -> list[np.ndarray]

The advantage of a trajectory is broadcast to every trained token of that trajectory (every
assistant turn), which is rLLM's ``stepwise_advantage.mode = broadcast``.

The built-in estimators live in ``advantage_estimators/`` (``grpo``: rLLM's population-std GRPO, what
the launcher's rLLM path computes; ``grpo_sample_std``: verl's own ``compute_grpo_outcome_advantage``).
A preset picks one by name (``algorithm.adv_estimator``), the local trainer looks it up here. A new
estimator is one module there with a function of the signature above, and one line below::

    ADVANTAGE_ESTIMATORS.register_path("NAME", "terminal_agent.training.algorithms.advantage_estimators.NAME:estimate")

This module imports no estimator (nor numpy), so a preset checks a name here for nothing; the
entry's module is imported on the first ``ADVANTAGE_ESTIMATORS.get(name)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from terminal_agent.registry import Registry

if TYPE_CHECKING:
    import numpy as np


class AdvantageEstimator(Protocol):
    def __call__(
        self, group_rewards: list[np.ndarray], *, norm_by_std: bool, epsilon: float
    ) -> list[np.ndarray]: ...


ADVANTAGE_ESTIMATORS: Registry[AdvantageEstimator] = Registry("advantage estimator")
"""Name -> estimator (an :class:`AdvantageEstimator`)."""

ADVANTAGE_ESTIMATORS.register_path("grpo", "terminal_agent.training.algorithms.advantage_estimators.grpo:estimate")
ADVANTAGE_ESTIMATORS.register_path(
    "grpo_sample_std", "terminal_agent.training.algorithms.advantage_estimators.grpo_sample_std:estimate"
)


def compute_advantages(
    name: str, group_rewards: list[np.ndarray], *, norm_by_std: bool = True, epsilon: float = 1e-6
) -> list[np.ndarray]:
    """Look ``name`` up in :data:`ADVANTAGE_ESTIMATORS` (unknown names list the valid ones) and run it."""
    out = ADVANTAGE_ESTIMATORS.get(name)(group_rewards, norm_by_std=norm_by_std, epsilon=epsilon)
    for rewards, adv in zip(group_rewards, out, strict=True):
        if len(rewards) != len(adv):
            raise ValueError(f"advantage estimator {name!r} returned {len(adv)} values for {len(rewards)} rewards")
    return out


__all__ = ["ADVANTAGE_ESTIMATORS", "AdvantageEstimator", "compute_advantages"]
