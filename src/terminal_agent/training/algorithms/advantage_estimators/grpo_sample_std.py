"""``grpo_sample_std``: GRPO as verl's ``core_algos.compute_grpo_outcome_advantage``, the *sample* std (ddof=1).

For whoever trains through verl's own estimator (``torch.std``); the rLLM path computes ``grpo``.
"""

from __future__ import annotations

import numpy as np

from terminal_agent.training.algorithms.advantage_estimators.group_relative import group_relative_advantages


def estimate(group_rewards: list[np.ndarray], *, norm_by_std: bool = True, epsilon: float = 1e-6) -> list[np.ndarray]:
    """One advantage per trajectory of each group, the group's sample std dividing."""
    return [group_relative_advantages(r, norm_by_std=norm_by_std, epsilon=epsilon, ddof=1) for r in group_rewards]
