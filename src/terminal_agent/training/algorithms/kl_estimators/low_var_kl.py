"""``low_var_kl`` (alias ``k3``): Schulman's k3 estimate, clamped, as verl's ``kl_penalty(..., "low_var_kl")``."""

from __future__ import annotations

import torch


def estimate(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token ``exp(ref - logp) - (ref - logp) - 1``, the log-ratio clamped to +-20 and the result to +-10."""
    kl = torch.clamp(ref_logprobs - logprobs, min=-20, max=20)
    return torch.clamp(torch.exp(kl) - kl - 1, min=-10, max=10)
