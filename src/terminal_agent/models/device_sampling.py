"""Next-token choice on the device, with no host round trip and no per-row generator objects.

Sampling uses the Gumbel-max trick: ``argmax(log_softmax(logits / T) + G)`` with i.i.d. Gumbel
noise ``G`` draws exactly from ``softmax(logits / T)``. The noise comes from a counter-based hash
of ``(seed, step, token id)``, so a row's draw at its ``k``-th token depends only on its seed and
``k``, not on which other rows share the step, and the whole choice is a fixed sequence of tensor
operations (capturable in a CUDA graph). ``top_p`` < 1 removes the tokens outside the nucleus
(the smallest set of most likely tokens whose mass reaches ``top_p``; the most likely token is
always kept) before the draw. Greedy rows take the argmax of the logits.

The reported logprob of the chosen token is ``log_softmax(logits / T)`` over the *full*
distribution (temperature 1 for greedy rows): what the trainer's forward recomputes.
"""

from __future__ import annotations

from typing import Any

_MASK64 = (1 << 64) - 1


def _signed(value: int) -> int:
    """A 64-bit constant as the signed int64 torch stores."""
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


_GOLDEN = _signed(0x9E3779B97F4A7C15)
_MIX1 = _signed(0xBF58476D1CE4E5B9)
_MIX2 = _signed(0x94D049BB133111EB)
_STEP = _signed(0xD1B54A32D192ED03)


def _shift_right(x: Any, bits: int) -> Any:
    """Logical right shift of int64 (torch's ``>>`` keeps the sign)."""
    return (x >> bits) & ((1 << (64 - bits)) - 1)


def hash_uniform(seeds: Any, steps: Any, vocab_size: int) -> Any:
    """Uniform floats in (0, 1), ``[B, V]``: a splitmix64 hash of each row's seed, step and token id."""
    import torch

    token = torch.arange(vocab_size, device=seeds.device, dtype=torch.int64)
    x = seeds[:, None] * _GOLDEN + steps[:, None] * _STEP + token[None, :]
    x = (x ^ _shift_right(x, 30)) * _MIX1
    x = (x ^ _shift_right(x, 27)) * _MIX2
    x = x ^ _shift_right(x, 31)
    top24 = _shift_right(x, 40).to(torch.float32)
    return (top24 + 0.5) * (1.0 / (1 << 24))


def choose_tokens(logits: Any, temperatures: Any, greedy: Any, top_ps: Any, seeds: Any, steps: Any,
                  *, nucleus: bool) -> tuple[Any, Any]:
    """Chosen ids ``[B]`` (int64) and their logprobs ``[B]`` (float32); see the module docstring.

    ``temperatures`` hold 1 for greedy rows; ``nucleus`` turns the top-p cut on (a sort per step,
    so only when some row asks for it).
    """
    import torch

    log_probs = torch.log_softmax(logits / temperatures[:, None], dim=-1)
    candidates = log_probs
    if nucleus:
        ordered, order = log_probs.sort(dim=-1, descending=True)
        mass_before = ordered.exp().cumsum(dim=-1) - ordered.exp()
        outside = mass_before >= top_ps[:, None]  # the first token always has mass_before 0: kept
        cut = torch.zeros_like(outside).scatter(-1, order, outside)
        candidates = log_probs.masked_fill(cut, float("-inf"))
    uniform = hash_uniform(seeds, steps, logits.shape[-1])
    gumbel = -torch.log(-torch.log(uniform))
    sampled = (candidates + gumbel).argmax(dim=-1)
    chosen = torch.where(greedy, logits.argmax(dim=-1), sampled)
    return chosen, log_probs.gather(-1, chosen[:, None])[:, 0]


__all__ = ["choose_tokens", "hash_uniform"]
