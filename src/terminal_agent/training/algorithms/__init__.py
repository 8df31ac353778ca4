"""The RL algorithm shared by the local trainer and documented against the rLLM/verl path.

Three plugin kinds, each one registry (:class:`~terminal_agent.registry.Registry`) with one signature
and one module per entry, registered by one line of the registry's module:

* :mod:`.advantages` - ``ADVANTAGE_ESTIMATORS`` (``advantage_estimators/``: ``grpo`` = rLLM's population-std
  GRPO, ``grpo_sample_std`` = verl's), picked by a preset's ``algorithm.adv_estimator``.
* :mod:`.loss_aggregation` - ``LOSS_AGG_MODES`` (``loss_agg_modes/``: verl's five ``loss_agg_mode`` names).
* :mod:`.kl_penalty` - ``KL_ESTIMATORS`` (``kl_estimators/``: ``low_var_kl``, alias ``k3``).

Beside them :mod:`.policy_loss` (verl's clipped token-level loss and the actor loss that composes the
three) and :mod:`.group_selection` (infrastructure masking, truncation policy, zero-variance rejection).
Names are imported lazily, so that checking a name in a registry (a preset does) does not import torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ADVANTAGE_ESTIMATORS": "terminal_agent.training.algorithms.advantages",
    "compute_advantages": "terminal_agent.training.algorithms.advantages",
    "LOSS_AGG_MODES": "terminal_agent.training.algorithms.loss_aggregation",
    "aggregate_loss": "terminal_agent.training.algorithms.loss_aggregation",
    "loss_normaliser": "terminal_agent.training.algorithms.loss_aggregation",
    "KL_ESTIMATORS": "terminal_agent.training.algorithms.kl_penalty",
    "kl_penalty": "terminal_agent.training.algorithms.kl_penalty",
    "GroupSelection": "terminal_agent.training.algorithms.group_selection",
    "select_groups": "terminal_agent.training.algorithms.group_selection",
    "ActorLossConfig": "terminal_agent.training.algorithms.policy_loss",
    "actor_loss": "terminal_agent.training.algorithms.policy_loss",
    "clipped_policy_loss": "terminal_agent.training.algorithms.policy_loss",
    "low_var_kl": "terminal_agent.training.algorithms.policy_loss",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'terminal_agent.training.algorithms' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
