"""``seq-mean-token-sum-norm``: ``seq-mean-token-sum`` divided by a constant (Dr. GRPO's normaliser).

The constant is ``loss_scale_factor``, by default the padded response length, as verl has it.
"""

from __future__ import annotations

import torch

from terminal_agent.training.algorithms.loss_agg_modes.seq_mean_token_sum import mean_of_sequence_sums


class SeqMeanTokenSumNorm:
    def aggregate(self, loss_mat: torch.Tensor, mask: torch.Tensor, *, batch_num_tokens: float | torch.Tensor | None,
                  global_batch_size: float | torch.Tensor | None, loss_scale_factor: float | None) -> torch.Tensor:
        loss = mean_of_sequence_sums(loss_mat, mask, global_batch_size)
        return loss / (mask.shape[-1] if loss_scale_factor is None else loss_scale_factor)

    def normaliser(self, *, tokens: float, rows: float, loss_scale_factor: float) -> float:
        return float(rows) * float(loss_scale_factor)


MODE = SeqMeanTokenSumNorm()
