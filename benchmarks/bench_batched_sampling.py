"""Batched sampling vs one-at-a-time generation on the embedded model, in the same run.

A GRPO group of ``--group`` episodes asks for a reply to the same agent prompt at once (from
threads, at temperature ``--temperature``, one seed per row). Measured, all on the same model:

- ``batched``: :class:`BatchedEmbeddedClient`, the group's calls decoded as one batch;
- ``sequential (our loop)``: the same client called one at a time (batches of one);
- ``HF generate, one at a time``: plain ``model.generate`` per call, the baseline of the targets
  (>= 4x on CPU, >= 10x on the GPU);
- ``HF generate, batched``: one left-padded ``model.generate`` call over the group, for reference.

The one-at-a-time rows run ``--sequential-calls`` calls (their tokens/s does not depend on the
group size). Tokens are sampled tokens; rows end at EOS or ``--max-new-tokens``. With
``--lora-step`` it also times a LoRA (peft) policy-gradient update on ``--update-batch`` rows of
``--update-tokens`` tokens (teacher-forced logprobs, backward, AdamW) and reports tokens/s and MFU
against ``--peak-tflops``. CPU timings on a shared machine are noisy: compare ratios, not seconds.
Every sampler, the continuous batching client and transformers' ``generate_batch`` included, is
compared in one run by ``bench_sampling.py``; this script stays for the LoRA update timing.

    python benchmarks/bench_batched_sampling.py [--group 8] [--max-new-tokens 64]
    python benchmarks/bench_batched_sampling.py --device cuda --dtype bfloat16 --group 8,32 --lora-step
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path
from typing import Any

from sampling_workload import chat_for

from terminal_agent.models.batched_generation import BatchedEmbeddedClient, BatchedGenerationConfig
from terminal_agent.models.embedded import encode_chat, ensure_embedded_model_cached
from terminal_agent.models.token_logprobs import compute_batch_token_logprobs, decode_attention_backends

def synchronize(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench_batched(client: BatchedEmbeddedClient, group: int, args: argparse.Namespace) -> tuple[int, float]:
    replies: list[Any] = [None] * group

    def call(row: int) -> None:
        replies[row] = client.complete(chat_for(row, args.distinct_prompts), temperature=args.temperature, seed=row, max_tokens=args.max_new_tokens)

    threads = [threading.Thread(target=call, args=(row,)) for row in range(group)]
    batches_before = client.stats.batches
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if client.stats.batches - batches_before != 1:
        print(f"  note: the group was decoded in {client.stats.batches - batches_before} batches")
    return sum(len(r.completion_ids) for r in replies), wall


def bench_sequential_client(client: BatchedEmbeddedClient, calls: int, args: argparse.Namespace) -> tuple[int, float]:
    tokens, started = 0, time.perf_counter()
    for row in range(calls):
        tokens += len(client.complete(chat_for(row, args.distinct_prompts), temperature=args.temperature, seed=row, max_tokens=args.max_new_tokens).completion_ids)
    return tokens, time.perf_counter() - started


def generate_kwargs(args: argparse.Namespace, pad_id: int) -> dict[str, Any]:
    sampling: dict[str, Any] = {"max_new_tokens": args.max_new_tokens, "pad_token_id": pad_id}
    if args.temperature > 0:
        sampling.update(do_sample=True, temperature=args.temperature, top_p=1.0, top_k=0)
    else:
        sampling.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    return sampling


def bench_hf_generate(
    model: Any, tokenizer: Any, rows: int, batched: bool, args: argparse.Namespace, cudnn_attention: bool = True
) -> tuple[int, float]:
    import contextlib

    import torch

    device = next(model.parameters()).device
    prompts = [encode_chat(tokenizer, chat_for(row, args.distinct_prompts)) for row in range(rows)]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    kwargs = generate_kwargs(args, pad_id)
    eos = tokenizer.eos_token_id
    tokens = 0
    synchronize(device)
    started = time.perf_counter()
    backends = contextlib.nullcontext() if cudnn_attention else decode_attention_backends(device)
    with torch.inference_mode(), backends:
        for group in [prompts] if batched else [[p] for p in prompts]:
            width = max(len(p) for p in group)  # left padding
            input_ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in group], device=device)
            attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in group], device=device)
            output = model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
            for row in output[:, width:].tolist():
                tokens += row.index(eos) + 1 if eos in row else len(row)
    synchronize(device)
    return tokens, time.perf_counter() - started


def bench_lora_step(model: Any, args: argparse.Namespace) -> dict[str, float]:
    """Time LoRA policy-gradient updates on a recorded-style batch (half prompt, half completion)."""
    import torch
    from peft import LoraConfig, get_peft_model

    device = next(model.parameters()).device
    policy = get_peft_model(
        model,
        LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
    )
    policy.train()
    optimizer = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=1e-5)
    generator = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    half = args.update_tokens // 2
    rows = [
        (torch.randint(0, vocab, (half,), generator=generator).tolist(), torch.randint(0, vocab, (args.update_tokens - half,), generator=generator).tolist())
        for _ in range(args.update_batch)
    ]
    advantages = torch.linspace(-1.0, 1.0, args.update_batch, device=device)

    def step() -> None:
        logprobs = compute_batch_token_logprobs(policy, rows, temperature=1.0)
        loss = -sum(a * lp.sum() for a, lp in zip(advantages, logprobs)) / sum(len(c) for _, c in rows)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in policy.parameters() if p.requires_grad], 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(args.update_warmup):
        step()
    synchronize(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    started = time.perf_counter()
    for _ in range(args.update_steps):
        step()
    synchronize(device)
    seconds = (time.perf_counter() - started) / args.update_steps
    tokens = args.update_batch * args.update_tokens
    config = model.config
    params = sum(p.numel() for p in model.parameters())
    # PaLM-style model FLOPs per trained token: 6N (forward + backward) + attention 12 * L * d * seq.
    flops_per_token = 6 * params + 12 * config.num_hidden_layers * config.hidden_size * args.update_tokens
    result = {
        "update_step_s": seconds,
        "update_tokens_per_s": tokens / seconds,
        "update_model_tflops": flops_per_token * tokens / seconds / 1e12,
        "update_mfu": flops_per_token * tokens / seconds / (args.peak_tflops * 1e12),
        "params": float(params),
    }
    if device.type == "cuda":
        result["update_peak_memory_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None, help="A converted transformers directory (default: the cached embedded model).")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--group", default="8", help="Comma-separated group sizes (concurrent calls) to measure.")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--distinct-prompts", action="store_true", help="A different prompt per row (default: the group's one prompt).")
    parser.add_argument("--sequential-calls", type=int, default=4, help="Calls timed for each one-at-a-time baseline.")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: the client's, half the cores).")
    parser.add_argument("--lora-step", action="store_true", help="Also time a LoRA update step (needs peft).")
    parser.add_argument("--update-batch", type=int, default=8)
    parser.add_argument("--update-tokens", type=int, default=512)
    parser.add_argument("--update-steps", type=int, default=5)
    parser.add_argument("--update-warmup", type=int, default=2)
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="Peak dense TFLOP/s of the device's dtype, for MFU (H100/H200 bf16: 989).")
    parser.add_argument("--json", default=None, help="Also write the results to this JSON file.")
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = Path(args.model_dir) if args.model_dir else ensure_embedded_model_cached()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, args.dtype)).to(args.device)
    model.eval()
    device = next(model.parameters()).device
    groups = [int(g) for g in args.group.split(",")]
    client = BatchedEmbeddedClient(
        model,
        tokenizer,
        BatchedGenerationConfig(
            max_new_tokens=args.max_new_tokens, stop_after_action=False, max_batch_size=max(groups), gather_window_s=0.05, num_threads=args.threads
        ),
    )
    if device.type == "cpu":  # every method runs on the same thread count (the client's default: half the cores)
        torch.set_num_threads(client.num_threads)
    print(f"model {model_dir.name} on {device} ({args.dtype}, {torch.get_num_threads()} CPU threads), {args.max_new_tokens} new tokens, temperature {args.temperature}, "
          f"{'distinct prompts' if args.distinct_prompts else 'one prompt per group'}")
    bench_batched(client, 2, args)  # warm-up (allocator, kernels); not timed
    bench_hf_generate(model, tokenizer, 1, False, argparse.Namespace(**{**vars(args), "max_new_tokens": 4}))

    results: dict[str, Any] = {
        "device": str(device), "dtype": args.dtype, "max_new_tokens": args.max_new_tokens,
        "distinct_prompts": args.distinct_prompts, "rows": [],
    }
    hf_tokens, hf_wall = bench_hf_generate(model, tokenizer, args.sequential_calls, False, args)
    seq_tokens, seq_wall = bench_sequential_client(client, args.sequential_calls, args)
    baseline = hf_tokens / hf_wall
    rows = [("HF generate, one at a time", args.sequential_calls, hf_tokens, hf_wall), ("sequential (our loop)", args.sequential_calls, seq_tokens, seq_wall)]
    if device.type == "cuda":  # the baseline again with our attention-backend choice, for a like-for-like ratio
        tokens, wall = bench_hf_generate(model, tokenizer, args.sequential_calls, False, args, cudnn_attention=False)
        rows.insert(1, ("HF generate, 1 at a time, no cuDNN attn", args.sequential_calls, tokens, wall))
    for group in groups:
        tokens, wall = bench_batched(client, group, args)
        rows.append((f"batched, group {group}", group, tokens, wall))
        hf_batched_tokens, hf_batched_wall = bench_hf_generate(model, tokenizer, group, True, args, cudnn_attention=False)
        rows.append((f"HF generate, batched, no cuDNN, group {group}", group, hf_batched_tokens, hf_batched_wall))
    print(f"{'method':38} {'calls':>5} {'tokens':>7} {'seconds':>8} {'tokens/s':>9} {'vs HF 1-at-a-time':>18} {'vs our loop 1-at-a-time':>24}")
    for name, calls, tokens, wall in rows:
        rate = tokens / wall
        print(f"{name:38} {calls:5d} {tokens:7d} {wall:8.2f} {rate:9.1f} {rate / baseline:17.2f}x {rate / (seq_tokens / seq_wall):23.2f}x")
        results["rows"].append({"method": name, "calls": calls, "tokens": tokens, "seconds": wall, "tokens_per_s": rate, "ratio_vs_hf_generate_one_at_a_time": rate / baseline})
    if args.lora_step:
        update = bench_lora_step(model, args)
        results["lora_update"] = update
        print(
            f"LoRA update, {args.update_batch} x {args.update_tokens} tokens: {update['update_step_s']:.3f} s/step, "
            f"{update['update_tokens_per_s']:.0f} tokens/s, {update['update_model_tflops']:.1f} model TFLOP/s, "
            f"MFU {100 * update['update_mfu']:.2f}% of {args.peak_tflops:.0f} TFLOP/s"
            + (f", peak memory {update['update_peak_memory_gib']:.1f} GiB" if "update_peak_memory_gib" in update else "")
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
