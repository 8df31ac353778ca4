"""How a per-token loss matrix becomes one scalar: verl's ``loss_agg_mode``, one registry, one module per mode.

Every mode is an object with the two methods of :class:`LossAggMode`: ``aggregate`` (verl's
``agg_loss`` under that name, including the global normalisers ``batch_num_tokens`` and
``global_batch_size``, so that summing micro-batch losses gives exactly the full-batch loss) and
``normaliser`` (what ``aggregate`` divides a whole batch's summed loss by, so that gradients of
unnormalised micro-batch losses can be accumulated first and scaled once: the local trainer's
streamed update).

The built-in modes live in ``loss_agg_modes/``, one module each. A new mode is one module there with
an object ``MODE`` of that shape, and one line below::

    LOSS_AGG_MODES.register_path("NAME", "terminal_agent.training.algorithms.loss_agg_modes.NAME:MODE")

This module imports no mode (nor torch), so a config checks a name here for nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from terminal_agent.registry import Registry

if TYPE_CHECKING:
    import torch


class LossAggMode(Protocol):
    def aggregate(
        self,
        loss_mat: torch.Tensor,
        mask: torch.Tensor,
        *,
        batch_num_tokens: float | torch.Tensor | None,
        global_batch_size: float | torch.Tensor | None,
        loss_scale_factor: float | None,
    ) -> torch.Tensor:
        """One scalar from ``loss_mat`` over ``mask`` (already in ``loss_mat``'s dtype); a ``None`` normaliser
        is this micro-batch's own."""
        ...

    def normaliser(self, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
        """``aggregate(..., batch_num_tokens=1, global_batch_size=1, loss_scale_factor=1)`` divided by this
        equals ``aggregate`` with the batch's real normalisers (every mode is linear in them)."""
        ...


LOSS_AGG_MODES: Registry[LossAggMode] = Registry("loss_agg_mode")
"""verl's ``loss_agg_mode`` name -> mode (a :class:`LossAggMode`)."""

_MODES = "terminal_agent.training.algorithms.loss_agg_modes"
LOSS_AGG_MODES.register_path("token-mean", f"{_MODES}.token_mean:MODE")
LOSS_AGG_MODES.register_path("token-sum", f"{_MODES}.token_sum:MODE")
LOSS_AGG_MODES.register_path("seq-mean-token-sum", f"{_MODES}.seq_mean_token_sum:MODE")
LOSS_AGG_MODES.register_path("seq-mean-token-mean", f"{_MODES}.seq_mean_token_mean:MODE")
LOSS_AGG_MODES.register_path("seq-mean-token-sum-norm", f"{_MODES}.seq_mean_token_sum_norm:MODE")


def aggregate_loss(
    loss_mat: torch.Tensor,
    mask: torch.Tensor,
    mode: str,
    *,
    batch_num_tokens: float | torch.Tensor | None = None,
    global_batch_size: float | torch.Tensor | None = None,
    loss_scale_factor: float | None = None,
) -> torch.Tensor:
    """One scalar from a per-token loss matrix, by the registered ``loss_agg_mode`` ``mode``.

    ``batch_num_tokens`` / ``global_batch_size``: the trained-token count and sequence count of the
    whole batch when ``loss_mat`` is one micro-batch of it (default: this micro-batch's own).
    ``loss_scale_factor``: the constant divisor of ``seq-mean-token-sum-norm`` (default: the
    padded response length, as verl does). An unknown ``mode`` is a ConfigError listing the valid ones.
    """
    aggregation = LOSS_AGG_MODES.get(mode)
    return aggregation.aggregate(
        loss_mat,
        mask.to(loss_mat.dtype),
        batch_num_tokens=batch_num_tokens,
        global_batch_size=global_batch_size,
        loss_scale_factor=loss_scale_factor,
    )


def loss_normaliser(mode: str, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
    """What :func:`aggregate_loss` divides a whole batch's summed loss by, under ``mode``.

    ``aggregate_loss(..., batch_num_tokens=1, global_batch_size=1, loss_scale_factor=1)`` divided
    by this equals the loss with the batch's real normalisers (every mode is linear in them), so
    gradients of unnormalised micro-batch losses can be accumulated first and scaled once.
    """
    return LOSS_AGG_MODES.get(mode).normaliser(tokens=tokens, rows=rows, loss_scale_factor=loss_scale_factor)


__all__ = ["LOSS_AGG_MODES", "LossAggMode", "aggregate_loss", "loss_normaliser"]
