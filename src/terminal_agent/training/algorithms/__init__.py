"""The RL algorithm shared by the local trainer and documented against the rLLM/verl path.

* :mod:`.advantages` - the advantage-estimator registry (``grpo`` = rLLM's population-std GRPO).
* :mod:`.policy_loss` - verl's clipped token-level loss, ``loss_agg_mode`` aggregation, low_var_kl.
* :mod:`.group_selection` - infrastructure masking, truncation policy, zero-variance rejection.
"""

from terminal_agent.training.algorithms.advantages import ADVANTAGE_ESTIMATORS, compute_advantages
from terminal_agent.training.algorithms.group_selection import GroupSelection, select_groups
from terminal_agent.training.algorithms.policy_loss import (
    LOSS_AGG_MODES,
    ActorLossConfig,
    actor_loss,
    aggregate_loss,
    clipped_policy_loss,
    low_var_kl,
)

__all__ = [
    "ADVANTAGE_ESTIMATORS",
    "LOSS_AGG_MODES",
    "ActorLossConfig",
    "GroupSelection",
    "actor_loss",
    "aggregate_loss",
    "clipped_policy_loss",
    "compute_advantages",
    "low_var_kl",
    "select_groups",
]
