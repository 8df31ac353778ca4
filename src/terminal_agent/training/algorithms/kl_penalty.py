"""Per-token estimates of KL(policy || reference): verl's ``kl_loss_type``, one registry, one module per estimator.

Every estimator has one signature, ``estimator(logprobs, ref_logprobs) -> per-token KL`` (tensors of
shape ``(batch, response_length)``); :func:`~terminal_agent.training.algorithms.policy_loss.actor_loss`
aggregates it like the policy loss. The built-in ones live in ``kl_estimators/``. A new estimator is
one module there with a function ``estimate`` of that signature, and one line below::

    KL_ESTIMATORS.register_path("NAME", "terminal_agent.training.algorithms.kl_estimators.NAME:estimate")

This module imports no estimator (nor torch), so a config checks a name here for nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from terminal_agent.registry import Registry

if TYPE_CHECKING:
    import torch


class KLEstimator(Protocol):
    def __call__(self, logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor: ...


KL_ESTIMATORS: Registry[KLEstimator] = Registry("kl_loss_type")
"""verl's ``kl_loss_type`` name -> estimator (a :class:`KLEstimator`)."""

KL_ESTIMATORS.register_path("low_var_kl", "terminal_agent.training.algorithms.kl_estimators.low_var_kl:estimate")
KL_ESTIMATORS.register_path("k3", "terminal_agent.training.algorithms.kl_estimators.low_var_kl:estimate")  # verl's alias


def kl_penalty(name: str, logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """The per-token KL of the registered estimator ``name`` (an unknown name is a ConfigError listing the valid ones)."""
    return KL_ESTIMATORS.get(name)(logprobs, ref_logprobs)


__all__ = ["KLEstimator", "KL_ESTIMATORS", "kl_penalty"]
