"""``seq-mean-token-mean``: each sequence's mean token loss, averaged over the sequences with a trained token."""

from __future__ import annotations

import torch

from terminal_agent.training.algorithms.masked_reductions import masked_sum


class SeqMeanTokenMean:
    def aggregate(self, loss_mat: torch.Tensor, mask: torch.Tensor, *, batch_num_tokens: float | torch.Tensor | None,
                  global_batch_size: float | torch.Tensor | None, loss_scale_factor: float | None) -> torch.Tensor:
        tokens = mask.sum(dim=-1)
        seq_losses = (loss_mat * mask).sum(dim=-1) / (tokens + 1e-8)
        seq_mask = (tokens > 0).to(loss_mat.dtype)
        denom = seq_mask.sum() if global_batch_size is None else global_batch_size
        return masked_sum(seq_losses, seq_mask) / denom

    def normaliser(self, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
        return float(rows)


MODE = SeqMeanTokenMean()
