"""Which attention kernel, and which padding, gives the local trainer non-finite gradients.

The 20-step ``local_1gpu`` runs on the H200 (bf16) skipped 2 and 5 optimizer steps on a non-finite
gradient norm with a finite loss; the first bad micro-batches had 2-5 left-padded rows, responses
of 135-256 tokens and rows up to 832 tokens. This script rebuilds micro-batches of those shapes and
puts each through the trainer's own path (``pack_rows``, ``forward_response_logprobs``,
``actor_loss``, backward) under every scaled-dot-product-attention backend (forced with
``torch.nn.attention.sdpa_kernel``; ``default`` is torch's own choice; ``no-cudnn`` is what the
sampler uses, see ``decode_attention_backends``) and every pad-attention mode of
``training.local.update.PAD_ATTENTION`` (``none``: the plain padding mask, where a left-pad query attends to
nothing; ``self``: each pad query attends to itself). It counts the batches whose LoRA gradients
are not finite.

Half the batches have a longest row of 64 mod 128 tokens (576, 704, 832...), the key length of a
cuDNN SDPA backward bug reported on Hopper (a row with a very negative logsumexp, which a fully
masked row has, overflows), the other half other lengths; the table splits the counts so.

For the first bad batch of each setting it records: the module whose output gradient went
non-finite first in the backward (and whether at pad or real positions), the parameters with
non-finite gradients, whether any hidden state of the forward was non-finite at pad or real
positions, and the backward function autograd's anomaly mode names.

    python benchmarks/diagnose_nonfinite_gradients.py --batches 4 --max-length 400        # CPU smoke
    python benchmarks/diagnose_nonfinite_gradients.py --device cuda --dtype bfloat16 --batches 32 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from terminal_agent.training.algorithms.policy_loss import actor_loss
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.policy import LocalPolicy, load_policy
from terminal_agent.training.local.update import (
    PAD_ATTENTION_MODES,
    TrainingRow,
    forward_response_logprobs,
    pack_rows,
    response_tensor,
)
from terminal_agent.training.preset_config import load_preset

BACKENDS = ("default", "cudnn", "efficient", "flash", "math", "no-cudnn")
ALL_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
LONGEST_64_MOD_128 = (576, 704, 832)
LONGEST_OTHER = (600, 640, 768, 800, 850, 900)

SYSTEM = (
    "You are an agent in a Linux terminal. Reply with exactly one action, for example\n"
    "<bash>\ncmd: ls -la\n</bash>\nWhen the task is done, reply <finish>\nmessage: done\n</finish>."
)


def backend_context(name: str) -> Any:
    """The ``sdpa_kernel`` context that forces backend ``name`` (``default``: none)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    chosen = {
        "cudnn": [SDPBackend.CUDNN_ATTENTION],
        "efficient": [SDPBackend.EFFICIENT_ATTENTION],
        "flash": [SDPBackend.FLASH_ATTENTION],
        "math": [SDPBackend.MATH],
        "no-cudnn": [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH],
    }
    return contextlib.nullcontext() if name == "default" else sdpa_kernel(chosen[name])


def token_pool(tokenizer: Any) -> list[int]:
    """Token ids of a chat-rendered terminal episode (system, task, actions, observations)."""
    messages = [{"role": "system", "content": SYSTEM}]
    for turn in range(12):
        messages.append({"role": "user", "content": (
            f"Task: in /app/project{turn}, count the lines of every .log file and write the totals to report{turn}.txt."
            if turn == 0 else
            "\n".join(f"-rw-r--r-- 1 root root {137 * (i + turn)} Jan {i + 1:2d} 12:0{i % 10} file_{turn}_{i}.log"
                      for i in range(12))
        )})
        messages.append({"role": "assistant", "content": (
            f"<bash>\ncmd: find /app/project{turn} -name '*.log' | xargs wc -l | sort -n > report{turn}.txt\n</bash>"
        )})
    return list(tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False))


def make_batches(count: int, pool: list[int], vocab: int, *, seed: int, max_length: int, random_ids: bool) -> list[list[TrainingRow]]:
    """``count`` micro-batches of 2-5 rows, responses of 100-256 tokens, the longest row taken in
    turn from a 64-mod-128 length and from another length (both capped at ``max_length``)."""
    rng = random.Random(seed)
    batches = []
    for index in range(count):
        lengths = LONGEST_64_MOD_128 if index % 2 == 0 else LONGEST_OTHER
        longest = min(rng.choice(lengths), max_length)
        rows = []
        for r in range(rng.randint(2, 5)):
            length = longest if r == 0 else rng.randint(min(140, longest - 1), longest - 1)
            response = min(rng.randint(100, 256), length - 8)
            if random_ids:
                ids = [rng.randrange(vocab) for _ in range(length)]
            else:
                start = rng.randrange(len(pool))
                ids = [pool[(start + i) % len(pool)] for i in range(length)]
            mask = [1] * response
            if response > 160 and rng.random() < 0.5:  # a merged row: an observation between two turns
                gap = rng.randint(20, 60)
                mask[60 : 60 + gap] = [0] * gap
            rows.append(TrainingRow(
                prompt_ids=ids[: length - response], response_ids=ids[length - response :], response_mask=mask,
                old_logprobs=[0.0] * response, advantage=rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 1.5),
                group=index, sample=r,
            ))
        batches.append(rows)
    return batches


@dataclass
class BatchResult:
    """What one micro-batch gave under one setting."""

    rows: int
    width: int
    response_width: int
    width_mod_128: int
    loss: float | None = None
    grad_norm: float | None = None
    nonfinite_grad: bool = False
    error: str | None = None
    """The exception text when the forced backend could not run this batch."""
    ms: float = 0.0


@dataclass
class SettingResult:
    """One backend x pad-attention mode over every batch."""

    backend: str
    pad_attention: str
    batches: list[BatchResult] = field(default_factory=list)
    trace: dict[str, Any] | None = None
    """The first bad batch, traced (see :func:`trace_batch`)."""

    def counts(self, only: str | None = None) -> tuple[int, int, int]:
        """(bad, ran, failed to run) over all batches, or only ``m64`` / ``other`` widths."""
        chosen = [b for b in self.batches
                  if only is None or (b.width_mod_128 == 64) == (only == "m64")]
        ran = [b for b in chosen if b.error is None]
        return sum(b.nonfinite_grad for b in ran), len(ran), len(chosen) - len(ran)


def batch_loss(policy: LocalPolicy, batch: list[TrainingRow], config: LocalTrainingConfig, pad_attention: str, pad_id: int) -> tuple[Any, Any]:
    """The trainer's loss of ``batch`` (on-policy: old logprobs are the current ones), and the packing."""
    import torch

    packed = pack_rows(batch, pad_id, policy.device)
    width = packed.response_width
    adv = response_tensor(batch, [[r.advantage] * len(r.response_ids) for r in batch], width, policy.device)
    logprobs, entropy = forward_response_logprobs(
        policy.model, packed, config.temperature, with_entropy=config.entropy_coeff != 0.0, pad_attention=pad_attention
    )
    old = logprobs.detach() + 0.01 * torch.randn_like(logprobs)  # ratios near 1, as after a sampler round trip
    loss, _ = actor_loss(
        old, logprobs, adv, packed.response_mask, config.actor_loss_config(), entropy=entropy,
        batch_num_tokens=sum(r.trained_tokens for r in batch), global_batch_size=len(batch),
    )
    return loss, packed


def grads_state(params: list[tuple[str, Any]]) -> tuple[float, list[str]]:
    """The total gradient norm and the names of parameters whose gradient is not finite."""
    import torch

    grads = [(n, p.grad) for n, p in params if p.grad is not None]
    if not grads:
        return 0.0, []
    norm = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.float()) for _, g in grads])))
    bad = [n for n, g in grads if not bool(g.isfinite().all())]
    return norm, bad


def trace_batch(policy: LocalPolicy, batch: list[TrainingRow], config: LocalTrainingConfig, backend: str, pad_attention: str, pad_id: int) -> dict[str, Any]:
    """Where a bad batch goes non-finite: forward hidden states at pad / real positions, the first
    module output whose gradient is non-finite in backward order, the parameters, and the backward
    function anomaly mode names."""
    import torch

    model = policy.model
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    pad_positions: dict[str, Any] = {}
    forward_bad: dict[str, dict[str, int]] = {}
    backward_order: list[dict[str, Any]] = []
    handles = []

    def split(bad_rows: Any) -> dict[str, int]:
        pads = pad_positions["mask"]
        return {"pad": int((bad_rows & pads).sum()), "real": int((bad_rows & ~pads).sum())}

    def make_hook(name: str) -> Any:
        def hook(module: Any, inputs: Any, output: Any) -> None:
            tensor = output[0] if isinstance(output, tuple) else output
            pads = pad_positions.get("mask")
            if not torch.is_tensor(tensor) or pads is None or tensor.dim() != 3 or tuple(tensor.shape[:2]) != tuple(pads.shape):
                return
            bad_rows = ~tensor.isfinite().all(-1)
            if bool(bad_rows.any()):
                forward_bad[name] = split(bad_rows)
            if tensor.requires_grad:
                def grad_hook(grad: Any, name: str = name) -> None:
                    bad = ~grad.isfinite().all(-1)
                    backward_order.append({"module": name, "nonfinite": bool(bad.any()), **split(bad)})
                tensor.register_hook(grad_hook)
        return hook

    for name, module in model.named_modules():
        if name:
            handles.append(module.register_forward_hook(make_hook(name)))
    model.zero_grad(set_to_none=True)
    try:
        with backend_context(backend):
            pad_positions["mask"] = pack_rows(batch, pad_id, policy.device).attention_mask == 0
            loss, _ = batch_loss(policy, batch, config, pad_attention, pad_id)
            loss.backward()
    finally:
        for handle in handles:
            handle.remove()
    _, bad_params = grads_state(params)
    first = next((entry for entry in backward_order if entry["nonfinite"]), None)
    model.zero_grad(set_to_none=True)
    anomaly = None
    with warnings.catch_warnings(), backend_context(backend), torch.autograd.detect_anomaly(check_nan=True):
        warnings.simplefilter("ignore")  # anomaly mode's forward traceback: the exception's first line names the function
        try:
            loss, _ = batch_loss(policy, batch, config, pad_attention, pad_id)
            loss.backward()
        except RuntimeError as exc:  # anomaly mode raises at the first backward function that returned NaN: its name is the finding
            anomaly = str(exc).splitlines()[0]
    model.zero_grad(set_to_none=True)
    return {
        "rows": [len(r.prompt_ids) + len(r.response_ids) for r in batch],
        "forward_nonfinite_modules": len(forward_bad),
        "forward_nonfinite_first": next(iter(forward_bad.items()), None),
        "first_nonfinite_output_grad": first,
        "backward_modules_seen": len(backward_order),
        "nonfinite_params": len(bad_params),
        "nonfinite_params_first": bad_params[:8],
        "anomaly": anomaly,
    }


def run_setting(policy: LocalPolicy, batches: list[list[TrainingRow]], config: LocalTrainingConfig, backend: str, pad_attention: str, pad_id: int, trace: bool) -> SettingResult:
    import torch

    result = SettingResult(backend, pad_attention)
    params = [(n, p) for n, p in policy.model.named_parameters() if p.requires_grad]
    for batch in batches:
        width = max(len(r.prompt_ids) + len(r.response_ids) for r in batch)
        record = BatchResult(rows=len(batch), width=width, response_width=max(len(r.response_ids) for r in batch),
                             width_mod_128=width % 128)
        policy.model.zero_grad(set_to_none=True)
        started = time.perf_counter()
        try:
            with backend_context(backend):
                loss, _ = batch_loss(policy, batch, config, pad_attention, pad_id)
                loss.backward()
        except RuntimeError as exc:  # a forced backend that cannot take this input ("No available kernel"): counted apart
            record.error = str(exc).splitlines()[0][:200]
            result.batches.append(record)
            continue
        if policy.device.type == "cuda":
            torch.cuda.synchronize(policy.device)
        record.ms = 1000 * (time.perf_counter() - started)
        record.loss = float(loss.detach())
        record.grad_norm, bad = grads_state(params)
        record.nonfinite_grad = bool(bad) or not math.isfinite(record.grad_norm)
        result.batches.append(record)
        if record.nonfinite_grad and trace and result.trace is None:
            result.trace = trace_batch(policy, batch, config, backend, pad_attention, pad_id)
    policy.model.zero_grad(set_to_none=True)
    return result


def print_table(results: list[SettingResult]) -> None:
    modes = list(dict.fromkeys(r.pad_attention for r in results))
    header = ["backend"] + [f"pad={m}: bad/ran (64 mod 128 | other)" for m in modes] + ["ms/batch"]
    print(" | ".join(header))
    for backend in dict.fromkeys(r.backend for r in results):
        cells = [backend]
        times = []
        for mode in modes:
            setting = next(r for r in results if r.backend == backend and r.pad_attention == mode)
            bad, ran, failed = setting.counts()
            bad64, ran64, _ = setting.counts("m64")
            bad_o, ran_o, _ = setting.counts("other")
            cell = f"{bad}/{ran} ({bad64}/{ran64} | {bad_o}/{ran_o})"
            cells.append(cell + (f", {failed} could not run" if failed else ""))
            times += [b.ms for b in setting.batches if b.error is None]
        cells.append(f"{sum(times) / len(times):.0f}" if times else "-")
        print(" | ".join(cells))
    for setting in results:
        if setting.trace:
            print(f"\nfirst bad batch, backend {setting.backend}, pad={setting.pad_attention}:")
            for key, value in setting.trace.items():
                print(f"  {key}: {value}")
        errors = {b.error for b in setting.batches if b.error}
        if errors:
            print(f"\n{setting.backend}, pad={setting.pad_attention} could not run: {sorted(errors)[0]}")


def default_backend_choice(policy: LocalPolicy, width: int = 832) -> str:
    """The SDPA backend torch picks by default for the trainer's attention call (heads x 64, a
    boolean mask, gradients on), from torch's own dispatcher."""
    import torch
    from torch.nn.attention import SDPBackend

    config = policy.model.config
    heads, dim = config.num_attention_heads, config.hidden_size // config.num_attention_heads
    dtype = next(policy.model.parameters()).dtype
    q = torch.randn(2, heads, width, dim, device=policy.device, dtype=dtype, requires_grad=True)
    mask = torch.ones(2, 1, width, width, dtype=torch.bool, device=policy.device).tril()
    try:
        return SDPBackend(torch._fused_sdp_choice(q, q, q, mask, 0.0, False)).name
    except (AttributeError, RuntimeError, ValueError) as exc:  # a private dispatcher hook: its absence is a finding, not a failure
        return f"unknown ({exc})"


def environment(policy: LocalPolicy) -> dict[str, Any]:
    import torch
    import transformers

    info: dict[str, Any] = {"torch": torch.__version__, "transformers": transformers.__version__,
                            "device": str(policy.device), "attn_implementation": policy.model.config._attn_implementation,
                            "default_sdpa_backend_with_mask": default_backend_choice(policy)}
    if policy.device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(policy.device)
        info["cudnn"] = torch.backends.cudnn.version()
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--model-dir", default="embedded", help="a transformers directory, or 'embedded' (SmolLM2-135M)")
    parser.add_argument("--batches", type=int, default=32, help="micro-batches per setting")
    parser.add_argument("--max-length", type=int, default=900, help="cap on the longest row")
    parser.add_argument("--backends", default=None, help=f"comma list of {','.join(BACKENDS)} (default: all on CUDA, default+math on CPU)")
    parser.add_argument("--pad-attention", default="none,self", help=f"comma list of {','.join(PAD_ATTENTION_MODES)}")
    parser.add_argument("--lora-targets", default="all-linear", help="'preset' (local_1gpu's), 'all-linear', or a comma list")
    parser.add_argument("--random-ids", action="store_true", help="uniform random token ids instead of chat text")
    parser.add_argument("--no-trace", action="store_true", help="skip tracing the first bad batch of each setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()

    import torch

    overrides: dict[str, Any] = {"device": args.device, "dtype": args.dtype, "model_path": args.model_dir, "wandb": False,
                                 "seed": args.seed}
    if args.lora_targets == "all-linear":
        overrides["lora_target_modules"] = list(ALL_LINEAR)
    elif args.lora_targets != "preset":
        overrides["lora_target_modules"] = args.lora_targets.split(",")
    config = LocalTrainingConfig.from_preset(load_preset("local_1gpu"), **overrides)
    started = time.monotonic()
    policy = load_policy(config)
    tokenizer = policy.tokenizer
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    batches = make_batches(args.batches, token_pool(tokenizer), len(tokenizer), seed=args.seed,
                           max_length=args.max_length, random_ids=args.random_ids)
    backends = args.backends.split(",") if args.backends else (list(BACKENDS) if args.device == "cuda" else ["default", "math"])
    modes = args.pad_attention.split(",")
    torch.manual_seed(args.seed)
    results = [run_setting(policy, batches, config, backend, mode, pad_id, trace=not args.no_trace)
               for backend in backends for mode in modes]
    env = environment(policy)
    print(f"{env}, lora {config.lora_target_modules} r{config.lora_rank}, {args.batches} batches per setting, "
          f"{time.monotonic() - started:.0f} s\n")
    print_table(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"environment": env, "args": {k: str(v) for k, v in vars(args).items()},
                   "lora_target_modules": config.lora_target_modules,
                   "settings": [{**asdict(r), "bad": r.counts()[0], "ran": r.counts()[1]} for r in results]}
        args.json.write_text(json.dumps(payload, indent=1, default=str))
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
