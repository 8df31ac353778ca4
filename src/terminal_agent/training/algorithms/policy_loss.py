"""The clipped token-level policy loss, its aggregation and the optional KL term, as verl 0.9.1 defines them.

Shapes: every tensor is ``(batch, response_length)``; ``mask`` is 1 on trained tokens (the
assistant's completion tokens) and 0 elsewhere.

* :func:`clipped_policy_loss` is verl's ``compute_policy_loss_vanilla``: ratio = exp(clamp(logp -
  old_logp, -20, 20)), PPO clip with separate low/high ranges (0.2 / 0.28 by default: "clip
  higher"), and the dual clip: for negative advantages the loss is capped at ``-A * clip_ratio_c``.
* :func:`aggregate_loss` is verl's ``agg_loss`` under its ``loss_agg_mode`` names, including the
  global normalisers (``batch_num_tokens``, ``global_batch_size``) so that summing micro-batch
  losses gives exactly the full-batch loss (gradient accumulation is exact).
* :func:`low_var_kl` is verl's ``kl_penalty(..., "low_var_kl")`` (Schulman's k3, clamped).
* :func:`actor_loss` composes them like verl's ``ppo_loss``: pg - entropy_coeff * entropy + kl_coef * kl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

LossAggMode = Literal["token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]
LOSS_AGG_MODES: tuple[str, ...] = (
    "token-mean",
    "token-sum",
    "seq-mean-token-sum",
    "seq-mean-token-mean",
    "seq-mean-token-sum-norm",
)


def masked_sum(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sum of ``values`` where ``mask`` is set; a NaN outside the mask does not leak in."""
    return (torch.where(mask.bool(), values, 0.0) * mask).sum()


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` where ``mask`` is set (a tiny floor on the count, as verl has)."""
    return masked_sum(values, mask) / (mask.sum() + 1e-8)


def aggregate_loss(
    loss_mat: torch.Tensor,
    mask: torch.Tensor,
    mode: str,
    *,
    batch_num_tokens: float | torch.Tensor | None = None,
    global_batch_size: float | torch.Tensor | None = None,
    loss_scale_factor: float | None = None,
) -> torch.Tensor:
    """One scalar from a per-token loss matrix, by verl's ``loss_agg_mode``.

    ``batch_num_tokens`` / ``global_batch_size``: the trained-token count and sequence count of the
    whole batch when ``loss_mat`` is one micro-batch of it (default: this micro-batch's own).
    ``loss_scale_factor``: the constant divisor of ``seq-mean-token-sum-norm`` (default: the
    padded response length, as verl does).
    """
    mask = mask.to(loss_mat.dtype)
    if mode == "token-mean":
        denom = mask.sum() if batch_num_tokens is None else batch_num_tokens
        return masked_sum(loss_mat, mask) / denom
    if mode == "token-sum":
        return masked_sum(loss_mat, mask)
    if mode in ("seq-mean-token-sum", "seq-mean-token-sum-norm"):
        seq_losses = (loss_mat * mask).sum(dim=-1)
        seq_mask = (mask.sum(dim=-1) > 0).to(loss_mat.dtype)
        denom = seq_mask.sum() if global_batch_size is None else global_batch_size
        loss = masked_sum(seq_losses, seq_mask) / denom
        if mode == "seq-mean-token-sum-norm":
            loss = loss / (mask.shape[-1] if loss_scale_factor is None else loss_scale_factor)
        return loss
    if mode == "seq-mean-token-mean":
        tokens = mask.sum(dim=-1)
        seq_losses = (loss_mat * mask).sum(dim=-1) / (tokens + 1e-8)
        seq_mask = (tokens > 0).to(loss_mat.dtype)
        denom = seq_mask.sum() if global_batch_size is None else global_batch_size
        return masked_sum(seq_losses, seq_mask) / denom
    raise ValueError(f"unknown loss_agg_mode {mode!r}; valid: {', '.join(LOSS_AGG_MODES)}")


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


def low_var_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(policy || reference), clamped like verl's ``low_var_kl``."""
    kl = torch.clamp(ref_logprobs - logprobs, min=-20, max=20)
    return torch.clamp(torch.exp(kl) - kl - 1, min=-10, max=10)


KL_ESTIMATORS = {"low_var_kl": low_var_kl, "k3": low_var_kl}


@dataclass
class ActorLossConfig:
    """The knobs of :func:`actor_loss` (verl's actor config names)."""

    clip_ratio_low: float = 0.2
    clip_ratio_high: float = 0.28
    clip_ratio_c: float = 3.0
    loss_agg_mode: str = "token-mean"
    entropy_coeff: float = 0.0
    use_kl_loss: bool = False
    kl_loss_coef: float = 0.001
    kl_loss_type: str = "low_var_kl"
    loss_scale_factor: float | None = None

    def __post_init__(self) -> None:
        if self.loss_agg_mode not in LOSS_AGG_MODES:
            raise ValueError(f"unknown loss_agg_mode {self.loss_agg_mode!r}; valid: {', '.join(LOSS_AGG_MODES)}")
        if self.use_kl_loss and self.kl_loss_type not in KL_ESTIMATORS:
            raise ValueError(f"unknown kl_loss_type {self.kl_loss_type!r}; valid: {', '.join(KL_ESTIMATORS)}")


def loss_normaliser(mode: str, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
    """What :func:`aggregate_loss` divides a whole batch's summed loss by, under ``mode``.

    ``aggregate_loss(..., batch_num_tokens=1, global_batch_size=1, loss_scale_factor=1)`` divided
    by this equals the loss with the batch's real normalisers (every mode is linear in them), so
    gradients of unnormalised micro-batch losses can be accumulated first and scaled once.
    """
    if mode == "token-mean":
        return float(tokens)
    if mode == "token-sum":
        return 1.0
    if mode in ("seq-mean-token-sum", "seq-mean-token-mean"):
        return float(rows)
    if mode == "seq-mean-token-sum-norm":
        return float(rows) * float(loss_scale_factor)
    raise ValueError(f"unknown loss_agg_mode {mode!r}; valid: {', '.join(LOSS_AGG_MODES)}")


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
    norms = dict(batch_num_tokens=batch_num_tokens, global_batch_size=global_batch_size, loss_scale_factor=config.loss_scale_factor)
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
        kld = KL_ESTIMATORS[config.kl_loss_type](logprobs, ref_logprobs)
        kl_loss = aggregate_loss(kld, mask, config.loss_agg_mode, **norms)
        loss = loss + config.kl_loss_coef * kl_loss
        metrics["actor/kl_loss"] = float(kl_loss.detach())
    return loss, metrics


__all__ = [
    "LOSS_AGG_MODES",
    "ActorLossConfig",
    "PolicyLossStats",
    "actor_loss",
    "aggregate_loss",
    "clipped_policy_loss",
    "loss_normaliser",
    "low_var_kl",
    "masked_mean",
    "masked_sum",
]
