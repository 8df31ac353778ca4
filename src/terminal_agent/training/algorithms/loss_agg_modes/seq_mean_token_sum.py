"""``seq-mean-token-sum``: each sequence's summed token loss, averaged over the sequences with a trained token."""

from __future__ import annotations

import torch

from terminal_agent.training.algorithms.masked_reductions import masked_sum


def mean_of_sequence_sums(loss_mat: torch.Tensor, mask: torch.Tensor,
                          global_batch_size: float | torch.Tensor | None) -> torch.Tensor:
    """Sum of each row's trained-token losses, over the rows that have one (or over ``global_batch_size``)."""
    seq_losses = (loss_mat * mask).sum(dim=-1)
    seq_mask = (mask.sum(dim=-1) > 0).to(loss_mat.dtype)
    denom = seq_mask.sum() if global_batch_size is None else global_batch_size
    return masked_sum(seq_losses, seq_mask) / denom


class SeqMeanTokenSum:
    def aggregate(self, loss_mat: torch.Tensor, mask: torch.Tensor, *, batch_num_tokens: float | torch.Tensor | None,
                  global_batch_size: float | torch.Tensor | None, loss_scale_factor: float | None) -> torch.Tensor:
        return mean_of_sequence_sums(loss_mat, mask, global_batch_size)

    def normaliser(self, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
        return float(rows)


MODE = SeqMeanTokenSum()
