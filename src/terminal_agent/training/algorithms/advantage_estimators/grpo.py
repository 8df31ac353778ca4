"""``grpo``: GRPO as rLLM's unified trainer computes it, (r - mean) / (population std + epsilon).

This is what the launcher's rLLM path computes. rLLM HEAD's unified trainer computes the
advantages itself (``rllm.trainer.algorithms.rl_algo``: ``np.std``, the *population* std, ddof=0)
and hands them to verl as precomputed; verl's own ``core_algos`` GRPO never runs on that path.
"""

from __future__ import annotations

import numpy as np

from terminal_agent.training.algorithms.advantage_estimators.group_relative import group_relative_advantages


def estimate(group_rewards: list[np.ndarray], *, norm_by_std: bool = True, epsilon: float = 1e-6) -> list[np.ndarray]:
    """One advantage per trajectory of each group, the group's population std dividing."""
    return [group_relative_advantages(r, norm_by_std=norm_by_std, epsilon=epsilon, ddof=0) for r in group_rewards]
