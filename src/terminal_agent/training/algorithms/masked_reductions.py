"""Sums and means over the trained tokens of a ``(batch, response_length)`` tensor, as verl computes them."""

from __future__ import annotations

import torch


def masked_sum(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sum of ``values`` where ``mask`` is set; a NaN outside the mask does not leak in."""
    return (torch.where(mask.bool(), values, 0.0) * mask).sum()


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` where ``mask`` is set (a tiny floor on the count, as verl has)."""
    return masked_sum(values, mask) / (mask.sum() + 1e-8)


__all__ = ["masked_mean", "masked_sum"]
