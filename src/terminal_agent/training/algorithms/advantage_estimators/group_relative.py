"""The group-relative advantage both GRPO estimators compute; they differ only in which std divides.

Both references treat a group of one the same way: mean 0, std 1, so its advantage is
``reward / (1 + epsilon)`` (``reward`` without std normalisation). ``epsilon`` is added to the
std, never under a square root, as both references do.
"""

from __future__ import annotations

import numpy as np


def group_relative_advantages(rewards: np.ndarray, *, norm_by_std: bool, epsilon: float, ddof: int) -> np.ndarray:
    """``(r - mean) / (std + epsilon)`` of one group (``r - mean`` without ``norm_by_std``); ``ddof`` picks the std."""
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
