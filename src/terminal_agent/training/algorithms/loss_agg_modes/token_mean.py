"""``token-mean``: the mean over every trained token of the batch (verl's default)."""

from __future__ import annotations

import torch

from terminal_agent.training.algorithms.masked_reductions import masked_sum


class TokenMean:
    def aggregate(self, loss_mat: torch.Tensor, mask: torch.Tensor, *, batch_num_tokens: float | torch.Tensor | None,
                  global_batch_size: float | torch.Tensor | None, loss_scale_factor: float | None) -> torch.Tensor:
        denom = mask.sum() if batch_num_tokens is None else batch_num_tokens
        return masked_sum(loss_mat, mask) / denom

    def normaliser(self, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
        return float(tokens)


MODE = TokenMean()
