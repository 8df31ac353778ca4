"""Group-relative advantage estimators, one registry, one signature.

Every estimator takes the scalar rewards of each group (one 1-D float64 array per task, one entry
per trajectory) and returns one advantage per trajectory, aligned with the input:

    estimator(group_rewards: list[np.ndarray], *, norm_by_std: bool, epsilon: float) -> list[np.ndarray]

The advantage of a trajectory is broadcast to every trained token of that trajectory (every
assistant turn), which is rLLM's ``stepwise_advantage.mode = broadcast``.

Which std: ``grpo`` is what the launcher's rLLM path computes. rLLM HEAD's unified trainer
computes the advantages itself (``rllm.trainer.algorithms.rl_algo``: ``np.std``, the *population*
std, ddof=0) and hands them to verl as precomputed; verl's own ``core_algos`` GRPO (``torch.std``,
the *sample* std, ddof=1) never runs on that path. So ``grpo`` matches rLLM, and
``grpo_sample_std`` is verl's ``compute_grpo_outcome_advantage`` for whoever trains through
verl's own estimator. Both treat a group of one the same way: mean 0, std 1, so its advantage
is ``reward / (1 + epsilon)`` (``reward`` without std normalisation). ``epsilon`` is added to the
std, never under a square root, as both references do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from terminal_agent.registry import Registry


class AdvantageEstimator(Protocol):
    def __call__(
        self, group_rewards: list[np.ndarray], *, norm_by_std: bool, epsilon: float
    ) -> list[np.ndarray]: ...


ADVANTAGE_ESTIMATORS: Registry[Callable[..., list[np.ndarray]]] = Registry("advantage estimator")


def _group_relative(rewards: np.ndarray, *, norm_by_std: bool, epsilon: float, ddof: int) -> np.ndarray:
    rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim != 1:
        raise ValueError(f"group rewards must be 1-D, got shape {rewards.shape}")
    if len(rewards) == 0:
        raise ValueError("an empty group has no advantage (drop it before estimating)")
    if len(rewards) == 1:
        mean, std = 0.0, 1.0
    else:
        mean, std = float(np.mean(rewards)), float(np.std(rewards, ddof=ddof))
    centered = rewards - mean
    return centered / (std + epsilon) if norm_by_std else centered


@ADVANTAGE_ESTIMATORS.register("grpo")
def grpo_advantages(
    group_rewards: list[np.ndarray], *, norm_by_std: bool = True, epsilon: float = 1e-6
) -> list[np.ndarray]:
    """GRPO as rLLM's unified trainer computes it: (r - mean) / (population std + epsilon)."""
    return [_group_relative(r, norm_by_std=norm_by_std, epsilon=epsilon, ddof=0) for r in group_rewards]


@ADVANTAGE_ESTIMATORS.register("grpo_sample_std")
def grpo_sample_std_advantages(
    group_rewards: list[np.ndarray], *, norm_by_std: bool = True, epsilon: float = 1e-6
) -> list[np.ndarray]:
    """GRPO as verl's ``core_algos.compute_grpo_outcome_advantage``: sample std (ddof=1)."""
    return [_group_relative(r, norm_by_std=norm_by_std, epsilon=epsilon, ddof=1) for r in group_rewards]


def compute_advantages(
    name: str, group_rewards: list[np.ndarray], *, norm_by_std: bool = True, epsilon: float = 1e-6
) -> list[np.ndarray]:
    """Look ``name`` up in :data:`ADVANTAGE_ESTIMATORS` (unknown names list the valid ones) and run it."""
    out = ADVANTAGE_ESTIMATORS.get(name)(group_rewards, norm_by_std=norm_by_std, epsilon=epsilon)
    for rewards, adv in zip(group_rewards, out, strict=True):
        if len(rewards) != len(adv):
            raise ValueError(f"advantage estimator {name!r} returned {len(adv)} values for {len(rewards)} rewards")
    return out


__all__ = ["ADVANTAGE_ESTIMATORS", "AdvantageEstimator", "compute_advantages", "grpo_advantages", "grpo_sample_std_advantages"]
