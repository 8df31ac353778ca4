"""Teacher-forced per-token log-probabilities: the trainer's side of "token in, token out".

The local clients return, with every reply, the log-probability of each sampled token under the
distribution they sampled from (``log_softmax(logits / temperature)``, see
:func:`sampling_log_softmax`). :func:`compute_token_logprobs` recomputes the same numbers with one
forward pass over prompt + completion, which is what a policy-gradient update needs (with
gradients when autograd is on). The two agree to float rounding: the tests pin the tolerance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def effective_temperature(temperature: float | None) -> float:
    """The temperature logprobs are taken at: greedy decoding (0 or ``None``) reports the model's own
    distribution (temperature 1), since the argmax "distribution" would give every token 0."""
    return float(temperature) if temperature and temperature > 0 else 1.0


def sampling_log_softmax(logits: Any, temperature: float | None) -> Any:
    """``log_softmax(logits / T)`` in float32 over the last axis, with :func:`effective_temperature`."""
    import torch

    return torch.log_softmax(logits.float() / effective_temperature(temperature), dim=-1)


def model_device(model: Any) -> Any:
    """The device of ``model``'s first parameter (works for plain and peft-wrapped models)."""
    return next(model.parameters()).device


def decode_attention_backends(device: Any) -> Any:
    """A context that keeps scaled-dot-product attention off the cuDNN backend on CUDA while decoding.

    Measured on an H200 (torch 2.11): cuDNN attention, which torch picks for decode steps, spent
    ~5 ms of CPU per layer call (a new key length every step), 85% of a decode step; the
    memory-efficient and flash kernels take microseconds. The flags are process-wide while the
    context is open. On CPU it does nothing.
    """
    import contextlib

    if getattr(device, "type", None) != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def compute_token_logprobs(
    model: Any,
    prompt_ids: Sequence[int],
    completion_ids: Sequence[int],
    temperature: float | None = 1.0,
) -> Any:
    """Log-probabilities of ``completion_ids`` given ``prompt_ids`` under ``model`` at ``temperature``.

    Returns a float32 tensor of shape ``(len(completion_ids),)`` on the model's device; it carries
    gradients when called with autograd enabled (wrap in ``torch.no_grad()`` otherwise).
    """
    return compute_batch_token_logprobs(model, [(prompt_ids, completion_ids)], temperature)[0]


def compute_batch_token_logprobs(
    model: Any,
    sequences: Sequence[tuple[Sequence[int], Sequence[int]]],
    temperature: float | None = 1.0,
) -> list[Any]:
    """:func:`compute_token_logprobs` for several ``(prompt_ids, completion_ids)`` pairs in one forward.

    Rows are right-padded (positions stay 0-based from each row's first token, as in sampling);
    returns one tensor per pair, each of its completion's length.
    """
    import torch

    if not sequences:
        return []
    for index, (prompt, completion) in enumerate(sequences):
        if not prompt:
            raise ValueError(f"compute_batch_token_logprobs: row {index} has an empty prompt")
    device = model_device(model)
    lengths = [len(p) + len(c) for p, c in sequences]
    width = max(lengths)
    input_ids = torch.zeros((len(sequences), width), dtype=torch.long, device=device)
    attention = torch.zeros((len(sequences), width), dtype=torch.long, device=device)
    for row, (prompt, completion) in enumerate(sequences):
        tokens = list(prompt) + list(completion)
        input_ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long, device=device)
        attention[row, : len(tokens)] = 1
    logits = model(input_ids=input_ids, attention_mask=attention, use_cache=False).logits
    results = []
    for row, (prompt, completion) in enumerate(sequences):
        start = len(prompt) - 1  # logits at position t predict token t + 1
        row_logits = logits[row, start : start + len(completion)]
        logprobs = sampling_log_softmax(row_logits, temperature)
        targets = input_ids[row, len(prompt) : len(prompt) + len(completion)]
        results.append(logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1))
    return results
