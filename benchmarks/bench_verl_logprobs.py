"""Token log-probs of a packed micro batch in verl's actor: the fallback loop against verl's fused path, same run.

verl 0.9.1 turns the actor's hidden states into token log-probs one of three ways. With flash-attn installed it uses
flash-attn's Triton cross-entropy; without it (every pip install of the project's GPU lock) it calls
``logprobs_from_logits_v2``, which loops over the first dimension of the logits: with packed rows that dimension is
the tokens, so a micro batch of 16k tokens is 16k log-softmax calls forward and as many backward. The profile of a
verl_1gpu step on the H100 (2026-12-07, docs/results/verl_1gpu_h100_packed) found the actor there, with the GPU
13.5% busy. ``use_fused_kernels`` with the torch backend (``model.fused_kernels: torch`` in a preset) computes
the same log-probs and entropy in chunks of 512 tokens from the hidden states and the lm_head weight.

Measured here, forward + backward of one packed micro batch (T tokens, hidden D, vocabulary V), both from the same
hidden states and weight:

- ``fallback``: ``logits = hidden @ weight.T``, verl's ``logprobs_from_logits`` (the per-token loop) and
  ``entropy_from_logits``, as verl's engine does without fused kernels;
- ``fused (torch)``: verl's ``FusedLinearForPPO(impl_backend="torch")``.

Printed: the median seconds of each over ``--repeats`` runs, their ratio, and the largest differences of the
log-probs, the entropy and the gradients of the hidden states and the weight. Runs where verl imports: the verl
launch venv on a CPU (float32), the GPU node's runtime on CUDA (bfloat16, ``--device cuda``).

    ~/.cache/terminal-agent/verl-launch-venv/bin/python benchmarks/bench_verl_logprobs.py --tokens 2048
    python3 benchmarks/bench_verl_logprobs.py --device cuda --dtype bfloat16 --tokens 16384
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any


def _synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(function: Callable[[], Any], device: str, repeats: int) -> tuple[float, Any]:
    result = function()  # warm-up (kernels, allocator)
    seconds = []
    for _ in range(repeats):
        _synchronize(device)
        started = time.perf_counter()
        result = function()
        _synchronize(device)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=2048, help="tokens of the packed micro batch (T)")
    parser.add_argument("--hidden", type=int, default=576, help="hidden size (SmolLM2-135M: 576)")
    parser.add_argument("--vocabulary", type=int, default=49152, help="vocabulary (SmolLM2: 49152)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)

    import torch
    from verl.utils.experimental.torch_functional import FusedLinearForPPO
    from verl.utils.torch_functional import entropy_from_logits, logprobs_from_logits

    dtype = getattr(torch, args.dtype)
    generator = torch.Generator().manual_seed(0)
    hidden0 = (torch.randn(args.tokens, args.hidden, generator=generator) * 0.5).to(args.device, dtype)
    weight0 = (torch.randn(args.vocabulary, args.hidden, generator=generator) * 0.05).to(args.device, dtype)
    labels = torch.randint(0, args.vocabulary, (args.tokens,), generator=generator).to(args.device)

    def fallback() -> tuple[torch.Tensor, ...]:
        hidden, weight = hidden0.clone().requires_grad_(), weight0.clone().requires_grad_()
        logits = hidden @ weight.T
        log_probs = logprobs_from_logits(logits, labels)
        entropy = entropy_from_logits(logits)
        (log_probs.float().sum() + 0.01 * entropy.float().sum()).backward()
        return log_probs.detach().float(), entropy.detach().float(), hidden.grad.float(), weight.grad.float()

    fused_module = FusedLinearForPPO(impl_backend="torch")

    def fused() -> tuple[torch.Tensor, ...]:
        hidden, weight = hidden0.clone().requires_grad_(), weight0.clone().requires_grad_()
        log_probs, entropy = fused_module.forward(hidden_states=hidden, vocab_weights=weight, input_ids=labels,
                                                  temperature=1.0)
        (log_probs.float().sum() + 0.01 * entropy.float().sum()).backward()
        return log_probs.detach().float(), entropy.detach().float(), hidden.grad.float(), weight.grad.float()

    fallback_s, expected = _timed(fallback, args.device, args.repeats)
    fused_s, got = _timed(fused, args.device, args.repeats)
    names = ("log_probs", "entropy", "hidden_grad", "weight_grad")
    gaps = {name: float((a - b).abs().max()) for name, a, b in zip(names, expected, got)}
    scale = {name: float(a.abs().max()) for name, a in zip(names, expected)}
    figures = {"device": args.device, "dtype": args.dtype, "tokens": args.tokens, "hidden": args.hidden,
               "vocabulary": args.vocabulary, "fallback_s": fallback_s, "fused_torch_s": fused_s,
               "ratio_fallback_over_fused": fallback_s / fused_s, "max_abs_gap": gaps, "max_abs_value": scale}
    print(f"{args.tokens} tokens x {args.vocabulary} vocabulary, {args.dtype} on {args.device}, "
          f"forward + backward, median of {args.repeats}")
    print(f"  fallback (verl's per-token log-softmax loop): {fallback_s:8.3f} s")
    print(f"  fused (verl's torch backend, 512-token chunks): {fused_s:6.3f} s")
    print(f"  ratio fallback / fused: {fallback_s / fused_s:.1f}x")
    print("  largest gaps: " + ", ".join(f"{name} {gap:.2e} (of {scale[name]:.2e})" for name, gap in gaps.items()))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(figures, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
