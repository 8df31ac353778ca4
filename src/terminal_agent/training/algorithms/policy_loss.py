"""The clipped token-level policy loss and the actor loss around it, as verl 0.9.1 defines them.

Shapes: every tensor is ``(batch, response_length)``; ``mask`` is 1 on trained tokens (the
assistant's completion tokens) and 0 elsewhere.

* :func:`clipped_policy_loss` is verl's ``compute_policy_loss_vanilla``: ratio = exp(clamp(logp -
  old_logp, -20, 20)), PPO clip with separate low/high ranges (0.2 / 0.28 by default: "clip
  higher"), and the dual clip: for negative advantages the loss is capped at ``-A * clip_ratio_c``.
* :func:`aggregate_loss` (:mod:`.loss_aggregation`) is verl's ``agg_loss``, one registered entry per
  ``loss_agg_mode``; :func:`kl_penalty` (:mod:`.kl_penalty`) is verl's ``kl_penalty``, one registered
  entry per ``kl_loss_type`` (``low_var_kl``: Schulman's k3, clamped).
* :func:`actor_loss` composes them like verl's ``ppo_loss``: pg - entropy_coeff * entropy + kl_coef * kl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import torch

from terminal_agent.training.algorithms.kl_estimators.low_var_kl import estimate as low_var_kl
from terminal_agent.training.algorithms.kl_penalty import KL_ESTIMATORS, kl_penalty
from terminal_agent.training.algorithms.loss_aggregation import LOSS_AGG_MODES, aggregate_loss, loss_normaliser
from terminal_agent.training.algorithms.masked_reductions import masked_mean, masked_sum


@dataclass
class PolicyLossStats:
    """Diagnostics of one policy-loss evaluation (verl's ``actor/*`` metrics)."""

    pg_clipfrac: float
    """Fraction of trained tokens where the PPO clip was active."""
    pg_clipfrac_lower: float
    """Fraction where the dual clip (negative advantage, ratio above clip_ratio_c) was active."""
    ppo_kl: float
    """Mean of (old_logp - logp) over trained tokens."""


def clipped_policy_loss(
    old_logprobs: torch.Tensor,
    logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_ratio_low: float = 0.2,
    clip_ratio_high: float = 0.28,
    clip_ratio_c: float = 3.0,
    loss_agg_mode: str = "token-mean",
    batch_num_tokens: float | torch.Tensor | None = None,
    global_batch_size: float | torch.Tensor | None = None,
    loss_scale_factor: float | None = None,
) -> tuple[torch.Tensor, PolicyLossStats]:
    """The dual-clip PPO surrogate of verl's ``compute_policy_loss_vanilla`` and its diagnostics."""
    if not clip_ratio_c > 1.0:
        raise ValueError(f"clip_ratio_c must be > 1.0 for the dual clip, got {clip_ratio_c}")
    mask_f = mask.to(logprobs.dtype)
    log_ratio = torch.clamp(logprobs - old_logprobs, min=-20.0, max=20.0)
    ratio = torch.exp(log_ratio)
    ppo_kl = masked_mean(-log_ratio, mask_f)

    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1 - clip_ratio_low, 1 + clip_ratio_high)
    clip_max = torch.maximum(unclipped, clipped)
    clipfrac = masked_mean(torch.gt(clipped, unclipped).to(logprobs.dtype), mask_f)

    dual = -advantages * clip_ratio_c
    dual_min = torch.min(dual, clip_max)
    clipfrac_lower = masked_mean(
        (torch.gt(clip_max, dual) * (advantages < 0)).to(logprobs.dtype), mask_f
    )
    per_token = torch.where(advantages < 0, dual_min, clip_max)
    loss = aggregate_loss(
        per_token,
        mask_f,
        loss_agg_mode,
        batch_num_tokens=batch_num_tokens,
        global_batch_size=global_batch_size,
        loss_scale_factor=loss_scale_factor,
    )
    stats = PolicyLossStats(
        pg_clipfrac=float(clipfrac.detach()),
        pg_clipfrac_lower=float(clipfrac_lower.detach()),
        ppo_kl=float(ppo_kl.detach()),
    )
    return loss, stats


@dataclass
class ActorLossConfig:
    """The knobs of :func:`actor_loss` (verl's actor config names)."""

    clip_ratio_low: float = 0.2
    """PPO clip below 1 (ratio floor ``1 - clip_ratio_low``)."""
    clip_ratio_high: float = 0.28
    """PPO clip above 1 (ratio ceiling ``1 + clip_ratio_high``; DAPO's clip-higher)."""
    clip_ratio_c: float = 3.0
    """Dual-clip bound for negative advantages (> 1)."""
    loss_agg_mode: str = "token-mean"
    """How token losses become one loss: a name in :data:`LOSS_AGG_MODES`."""
    entropy_coeff: float = 0.0
    """Weight of the entropy bonus (0: none, and no entropy is computed)."""
    use_kl_loss: bool = False
    """Add ``kl_loss_coef`` times the KL(policy || reference) term."""
    kl_loss_coef: float = 0.001
    """Weight of the KL term."""
    kl_loss_type: str = "low_var_kl"
    """The KL estimator: a name in :data:`KL_ESTIMATORS`."""
    loss_scale_factor: float | None = None
    """The constant divisor of ``seq-mean-token-sum-norm``; None: the padded response length."""

    def __post_init__(self) -> None:
        LOSS_AGG_MODES.get(self.loss_agg_mode)  # an unknown name is a ConfigError listing the valid ones
        if self.use_kl_loss:
            KL_ESTIMATORS.get(self.kl_loss_type)


class _LossNorms(TypedDict):
    """The normalisers every term of :func:`actor_loss` is aggregated with (keywords of :func:`aggregate_loss`)."""

    batch_num_tokens: float | torch.Tensor | None
    global_batch_size: float | torch.Tensor | None
    loss_scale_factor: float | None


def actor_loss(
    old_logprobs: torch.Tensor,
    logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    config: ActorLossConfig,
    *,
    entropy: torch.Tensor | None = None,
    ref_logprobs: torch.Tensor | None = None,
    batch_num_tokens: float | torch.Tensor | None = None,
    global_batch_size: float | torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """pg loss - entropy_coeff * entropy loss + kl_loss_coef * KL loss, each aggregated alike."""
    norms = _LossNorms(batch_num_tokens=batch_num_tokens, global_batch_size=global_batch_size,
                       loss_scale_factor=config.loss_scale_factor)
    pg_loss, stats = clipped_policy_loss(
        old_logprobs,
        logprobs,
        advantages,
        mask,
        clip_ratio_low=config.clip_ratio_low,
        clip_ratio_high=config.clip_ratio_high,
        clip_ratio_c=config.clip_ratio_c,
        loss_agg_mode=config.loss_agg_mode,
        **norms,
    )
    metrics = {
        "actor/pg_loss": float(pg_loss.detach()),
        "actor/pg_clipfrac": stats.pg_clipfrac,
        "actor/pg_clipfrac_lower": stats.pg_clipfrac_lower,
        "actor/ppo_kl": stats.ppo_kl,
    }
    loss = pg_loss
    if entropy is not None and config.entropy_coeff != 0.0:
        entropy_loss = aggregate_loss(entropy, mask, config.loss_agg_mode, **norms)
        loss = loss - config.entropy_coeff * entropy_loss
        metrics["actor/entropy_loss"] = float(entropy_loss.detach())
    if config.use_kl_loss:
        if ref_logprobs is None:
            raise ValueError("use_kl_loss is set but no reference logprobs were given")
        kld = kl_penalty(config.kl_loss_type, logprobs, ref_logprobs)
        kl_loss = aggregate_loss(kld, mask, config.loss_agg_mode, **norms)
        loss = loss + config.kl_loss_coef * kl_loss
        metrics["actor/kl_loss"] = float(kl_loss.detach())
    return loss, metrics


__all__ = [
    "KL_ESTIMATORS",
    "LOSS_AGG_MODES",
    "ActorLossConfig",
    "PolicyLossStats",
    "actor_loss",
    "aggregate_loss",
    "clipped_policy_loss",
    "kl_penalty",
    "loss_normaliser",
    "low_var_kl",
    "masked_mean",
    "masked_sum",
]
