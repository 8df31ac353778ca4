"""``token-sum``: the sum over every trained token of the batch (no normaliser)."""

from __future__ import annotations

import torch

from terminal_agent.training.algorithms.masked_reductions import masked_sum


class TokenSum:
    def aggregate(self, loss_mat: torch.Tensor, mask: torch.Tensor, *, batch_num_tokens: float | torch.Tensor | None,
                  global_batch_size: float | torch.Tensor | None, loss_scale_factor: float | None) -> torch.Tensor:
        return masked_sum(loss_mat, mask)

    def normaliser(self, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
        return 1.0


MODE = TokenSum()
