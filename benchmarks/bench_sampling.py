"""Every sampler on the same model, the same prompts and the same sampling settings, in one run.

Methods (``--methods``, comma-separated; default all):

- ``hf-sequential``: plain ``model.generate``, one call at a time (``--sequential-calls`` calls;
  its rate does not depend on N, so it is measured once and shown beside each N);
- ``hf-batched``: one left-padded ``model.generate`` call over the N prompts (a baseline);
- ``batched-sampler``: today's :class:`BatchedEmbeddedClient`, N concurrent calls from threads
  (the other baseline);
- ``continuous``: the :class:`ContinuousBatchingClient` (``terminal_agent.models.continuous_batching``),
  N concurrent calls from threads; "not available" when the module is missing;
- ``hf-continuous``: transformers' own continuous batching, ``model.generate_batch`` over the N
  prompts with a persistent manager (warmed up untimed, reused by the timed rounds, destroyed
  after each N; each call still starts and stops the manager's loop), when the installed
  transformers has it; a failure (peft, CPU, ...) is printed in its row.

Fairness: every row samples at ``--temperature`` with no top-k and top-p 1, and ends at EOS or
``--max-new-tokens``; both clients run with ``stop_after_action=False`` and ``max_batch_size`` >= N,
and each call passes a seed (as the trainer does); ``hf-continuous`` returns logprobs, like the
clients. HF ``generate`` runs under the project's attention-backend choice on CUDA
(``decode_attention_backends``). Each (method, N) is warmed up once untimed: with
``--warmup-tokens`` new tokens for the eager methods, a full call for the two continuous ones
(CUDA graph capture; the new client's warm-up time is printed). The concurrent methods run
``--rounds`` timed rounds and report the median tokens/s. ``--lora`` wraps the model in the local
trainer's LoRA, built by the trainer's own ``load_policy`` from the ``local_1gpu`` preset (rank 16,
alpha 32, dropout 0, its target modules; ``--lora-targets all`` for all seven projections).

On CUDA each method also runs one profiled round (not timed): the GPU busy share is the union of
the CUDA kernel/memcpy intervals seen by ``torch.profiler`` over that round's wall time. The time
per decode step comes from the clients' ``stats`` (new client: ``decode_s / decode_steps``; today's:
``busy_s / forward_calls``, prefill included) and, for HF and ``hf-continuous``, is estimated as
wall time over the number of decode steps (marked ``~``). CPU timings on a shared machine are noisy:
compare ratios, not seconds.

    python benchmarks/bench_sampling.py --concurrency 8 --max-new-tokens 32 --rounds 1
    python benchmarks/bench_sampling.py --device cuda --dtype bfloat16 --lora --concurrency 8,64 --max-new-tokens 128 --rounds 3 --json sampling.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from sampling_workload import chats, prompt_ids, sampled_length

from terminal_agent.models.batched_generation import BatchedEmbeddedClient, BatchedGenerationConfig
from terminal_agent.models.embedded import ensure_embedded_model_cached, eos_token_ids
from terminal_agent.models.token_logprobs import decode_attention_backends

ALL_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LABELS = {
    "hf-sequential": "HF generate, one at a time",
    "hf-batched": "HF generate, one batched call",
    "batched-sampler": "today's batched sampler",
    "continuous": "continuous batching client",
    "hf-continuous": "transformers generate_batch",
}
CONCURRENT = ["hf-batched", "batched-sampler", "continuous", "hf-continuous"]


class MethodUnavailable(Exception):
    """The method cannot run here; the message goes in its row."""


@dataclass
class Measurement:
    """One timed run of a method."""

    calls: int
    tokens: int
    seconds: float
    step_s: float | None = None
    """Mean seconds per decode step (from the client's stats, or estimated)."""
    step_estimated: bool = False
    stats: dict[str, Any] = field(default_factory=dict)
    """Deltas of the client's stats over this run."""

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds


@dataclass
class Row:
    """A line of the report: a method at one N."""

    method: str
    concurrency: int
    runs: list[Measurement] = field(default_factory=list)
    warmup_s: float | None = None
    warmup_stats: dict[str, Any] = field(default_factory=dict)
    """Deltas of a client's stats over its warm-up (graph captures)."""
    gpu_busy_share: float | None = None
    error: str | None = None

    def median(self) -> Measurement | None:
        if not self.runs:
            return None
        ordered = sorted(self.runs, key=lambda m: m.rate)
        return ordered[(len(ordered) - 1) // 2]


def synchronize(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def stats_snapshot(stats: Any) -> dict[str, float]:
    """The numeric fields of a client's stats record."""
    values = dataclasses.asdict(stats) if dataclasses.is_dataclass(stats) else dict(vars(stats))
    return {k: v for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def stats_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What a run added to the stats (``largest_batch`` is a maximum, kept as is)."""
    return {k: v if k == "largest_batch" else v - before.get(k, 0) for k, v in after.items()}


def concurrent_complete(client: Any, n: int, args: argparse.Namespace, max_tokens: int) -> list[Any]:
    """N calls of ``client.complete`` from N threads at once; the first failure is raised."""
    replies: list[Any] = [None] * n
    errors: list[BaseException] = []
    rows = chats(n, args.distinct_prompts)

    def call(row: int) -> None:
        try:
            replies[row] = client.complete(rows[row], temperature=args.temperature, top_p=1.0, seed=row, max_tokens=max_tokens)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which reports it in the row
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(row,)) for row in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return replies


class HFGenerate:
    """Plain ``model.generate``: one call per prompt, or one left-padded call over all of them."""

    def __init__(self, model: Any, tokenizer: Any, args: argparse.Namespace, *, batched: bool):
        self.model, self.tokenizer, self.args, self.batched = model, tokenizer, args, batched
        self.device = next(model.parameters()).device
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.pad_id = int(pad)
        self.eos_ids = eos_token_ids(model, tokenizer)

    def warm_up(self, n: int) -> dict[str, Any]:
        self._generate(n if self.batched else 1, self.args.warmup_tokens)
        return {}

    def run(self, n: int) -> Measurement:
        return self._generate(n, self.args.max_new_tokens)

    def _generate(self, n: int, max_new_tokens: int) -> Measurement:
        import torch

        prompts = prompt_ids(self.tokenizer, n, self.args.distinct_prompts)
        kwargs: dict[str, Any] = {"max_new_tokens": max_new_tokens, "pad_token_id": self.pad_id, "eos_token_id": sorted(self.eos_ids)}
        if self.args.temperature > 0:
            kwargs.update(do_sample=True, temperature=self.args.temperature, top_p=1.0, top_k=0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        tokens = steps = 0
        synchronize(self.device)
        started = time.perf_counter()
        with torch.inference_mode(), decode_attention_backends(self.device):
            for group in [prompts] if self.batched else [[p] for p in prompts]:
                width = max(len(p) for p in group)
                input_ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p in group], device=self.device)
                attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in group], device=self.device)
                output = self.model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
                steps += output.shape[1] - width  # generate runs until every row is done
                tokens += sum(sampled_length(row, self.eos_ids) for row in output[:, width:].tolist())
        synchronize(self.device)
        seconds = time.perf_counter() - started
        return Measurement(calls=n, tokens=tokens, seconds=seconds, step_s=seconds / max(1, steps), step_estimated=True)

    def close(self) -> None:
        pass


class ClientMethod:
    """A thread-safe model client (today's batched sampler or the continuous batching client)."""

    def __init__(self, client: Any, model: Any, args: argparse.Namespace, *, step_time: Callable[[dict[str, Any]], float | None], full_warmup: bool):
        self.client, self.args, self.step_time, self.full_warmup = client, args, step_time, full_warmup
        self.device = next(model.parameters()).device

    def warm_up(self, n: int) -> dict[str, Any]:
        before = stats_snapshot(self.client.stats)
        concurrent_complete(self.client, n, self.args, self.args.max_new_tokens if self.full_warmup else self.args.warmup_tokens)
        return stats_delta(before, stats_snapshot(self.client.stats))

    def run(self, n: int) -> Measurement:
        before = stats_snapshot(self.client.stats)
        synchronize(self.device)
        started = time.perf_counter()
        replies = concurrent_complete(self.client, n, self.args, self.args.max_new_tokens)
        synchronize(self.device)
        seconds = time.perf_counter() - started
        delta = stats_delta(before, stats_snapshot(self.client.stats))
        return Measurement(calls=n, tokens=sum(len(r.completion_ids) for r in replies), seconds=seconds, step_s=self.step_time(delta), stats=delta)

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if close is not None:
            close()


class HFContinuous:
    """transformers' continuous batching: ``model.generate_batch`` with a persistent manager per N."""

    def __init__(self, model: Any, tokenizer: Any, args: argparse.Namespace):
        if not hasattr(model, "generate_batch"):
            import transformers

            raise MethodUnavailable(f"transformers {transformers.__version__} has no generate_batch")
        from transformers import GenerationConfig

        self.model, self.tokenizer, self.args = model, tokenizer, args
        self.eos_ids = eos_token_ids(model, tokenizer)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        sampling = dict(do_sample=True, temperature=args.temperature, top_k=0, top_p=1.0) if args.temperature > 0 else dict(do_sample=False)
        self.generation_config = GenerationConfig(
            max_new_tokens=args.max_new_tokens, eos_token_id=sorted(self.eos_ids), pad_token_id=int(pad), **sampling
        )
        self.current_n: int | None = None
        logging.getLogger("ContinuousBatchingLogger").setLevel(logging.ERROR)  # its per-call notes would drown the table

    def _call(self, n: int) -> tuple[int, float, int]:
        try:
            from transformers import ContinuousBatchingConfig

            extra: dict[str, Any] = {"continuous_batching_config": ContinuousBatchingConfig(return_logprobs=True)}
        except ImportError:  # older 5.x: the config lives on the generation config, defaults are fine
            extra = {}
        prompts = prompt_ids(self.tokenizer, n, self.args.distinct_prompts)
        device = next(self.model.parameters()).device
        synchronize(device)
        started = time.perf_counter()
        results = self.model.generate_batch(inputs=prompts, generation_config=self.generation_config, persistent_manager=True, **extra)
        synchronize(device)
        seconds = time.perf_counter() - started
        outputs = list(results.values())
        failed = [o.error for o in outputs if getattr(o, "error", None)]
        if len(outputs) != n or failed:  # generate_batch logs its own failures and returns what it has
            raise RuntimeError(f"generate_batch answered {len(outputs)} of {n} prompts" + (f": {failed[0]}" if failed else ""))
        lengths = [len(o.generated_tokens) for o in outputs]
        return sum(lengths), seconds, max(lengths)

    def warm_up(self, n: int) -> dict[str, Any]:
        if self.current_n != n:  # the manager is sized for its first workload: a new one per N
            self.model.destroy_cached_continuous_batching_manager()
            self.current_n = n
        self._call(n)
        return {}

    def run(self, n: int) -> Measurement:
        tokens, seconds, steps = self._call(n)
        return Measurement(calls=n, tokens=tokens, seconds=seconds, step_s=seconds / max(1, steps), step_estimated=True)

    def close(self) -> None:
        self.model.destroy_cached_continuous_batching_manager()


def continuous_client(model: Any, tokenizer: Any, args: argparse.Namespace, max_n: int) -> ClientMethod:
    try:
        from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig
    except ImportError as exc:
        raise MethodUnavailable(f"not available ({exc})") from None
    config = ContinuousBatchingConfig(
        max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=1.0, stop_after_action=False,
        max_batch_size=max_n, num_threads=args.threads,
    )
    client = ContinuousBatchingClient(model, tokenizer, config)
    return ClientMethod(
        client, model, args, full_warmup=True,
        step_time=lambda d: d["decode_s"] / d["decode_steps"] if d.get("decode_steps") else None,
    )


def batched_sampler(model: Any, tokenizer: Any, args: argparse.Namespace, max_n: int) -> ClientMethod:
    config = BatchedGenerationConfig(
        max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=1.0, stop_after_action=False,
        max_batch_size=max_n, num_threads=args.threads,
    )
    return ClientMethod(
        BatchedEmbeddedClient(model, tokenizer, config), model, args, full_warmup=False,
        step_time=lambda d: d["busy_s"] / d["forward_calls"] if d.get("forward_calls") else None,
    )


def gpu_busy_share(run: Callable[[], Any], device: Any) -> float:
    """Share of one run's wall time during which the GPU executed something (union of kernel/memcpy intervals)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    synchronize(device)
    with profile(activities=[ProfilerActivity.CUDA]) as profiler:
        started = time.perf_counter()
        run()
        synchronize(device)
        wall = time.perf_counter() - started
    intervals = sorted((e.time_range.start, e.time_range.end) for e in profiler.events() if e.device_type == DeviceType.CUDA)
    busy, end = 0.0, float("-inf")
    for start, stop in intervals:
        if stop > end:
            busy += stop - max(start, end)
            end = stop
    return busy / 1e6 / wall


def load_model(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The model (plain, or wrapped in the trainer's LoRA) and tokenizer, and a description of the LoRA."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = Path(args.model_dir) if args.model_dir else ensure_embedded_model_cached()
    if not args.lora:
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, args.dtype)).to(args.device)
        return model.eval(), tokenizer, "none"
    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.local.policy import load_policy
    from terminal_agent.training.preset_config import load_preset

    overrides: dict[str, Any] = {"device": args.device, "dtype": args.dtype, "model_path": str(model_dir) if args.model_dir else "embedded"}
    if args.lora_targets:
        overrides["lora_target_modules"] = ALL_PROJECTIONS if args.lora_targets == "all" else args.lora_targets.split(",")
    config = LocalTrainingConfig.from_preset(load_preset(args.lora_preset), **overrides)
    policy = load_policy(config)
    described = f"r={config.lora_rank} alpha={config.lora_alpha} dropout={config.lora_dropout} on {','.join(config.lora_target_modules)}"
    return policy.model.eval(), policy.tokenizer, described


def build_method(key: str, model: Any, tokenizer: Any, args: argparse.Namespace, max_n: int) -> Any:
    if key == "hf-sequential":
        return HFGenerate(model, tokenizer, args, batched=False)
    if key == "hf-batched":
        return HFGenerate(model, tokenizer, args, batched=True)
    if key == "batched-sampler":
        return batched_sampler(model, tokenizer, args, max_n)
    if key == "continuous":
        return continuous_client(model, tokenizer, args, max_n)
    return HFContinuous(model, tokenizer, args)


def measure(method: Any, row: Row, n: int, rounds: int, device: Any, profile_n: int) -> None:
    """Warm up, time ``rounds`` runs, then (on CUDA) profile one more; a failure is kept in the row."""
    try:
        started = time.perf_counter()
        row.warmup_stats = method.warm_up(n)
        row.warmup_s = time.perf_counter() - started
        for _ in range(rounds):
            row.runs.append(method.run(n))
    except Exception as exc:  # noqa: BLE001 - a sampler that fails is a row of the report, not the end of the run
        row.error = f"failed: {type(exc).__name__}: {exc}".replace("\n", " ")[:300]
        return
    if device.type == "cuda" and profile_n:
        try:
            row.gpu_busy_share = gpu_busy_share(lambda: method.run(profile_n), device)
        except Exception as exc:  # noqa: BLE001 - without a profile the timed rounds still stand
            print(f"  note: profiling {LABELS[row.method]} failed: {type(exc).__name__}: {exc}")


def report(rows: list[Row], ns: list[int]) -> list[dict[str, Any]]:
    """Print the console and markdown tables; return the JSON rows."""
    by_key = {(r.method, r.concurrency): r for r in rows}
    records: list[dict[str, Any]] = []
    lines: list[list[str]] = []  # a table row, or [label, N, message] for a method without numbers
    for n in ns:
        baselines = {}
        for key in ("hf-batched", "batched-sampler"):
            base = by_key.get((key, n))
            median = base.median() if base else None
            baselines[key] = median.rate if median else None
        for key in LABELS:
            row = by_key.get((key, n)) or by_key.get((key, 0))
            if row is None:
                continue
            median = row.median()
            shown_n = "1" if key == "hf-sequential" else str(n)
            record: dict[str, Any] = {
                "method": key, "label": LABELS[key], "concurrency": int(shown_n), "error": row.error,
                "warmup_s": row.warmup_s, "warmup_stats": row.warmup_stats,
            }
            records.append(record)
            if median is None:
                lines.append([LABELS[key], shown_n, row.error or "not run"])
                continue
            ratios = [median.rate / b if b else None for b in (baselines["hf-batched"], baselines["batched-sampler"])]
            share = row.gpu_busy_share
            step = "" if median.step_s is None else f"{'~' if median.step_estimated else ''}{1000 * median.step_s:.2f}"
            lines.append([
                LABELS[key], shown_n, str(median.calls), str(median.tokens), f"{median.seconds:.2f}", f"{median.rate:,.1f}",
                *("" if r is None else f"{r:.2f}x" for r in ratios),
                "" if share is None else f"{100 * share:.0f}%", step,
            ])
            record.update(
                calls=median.calls, tokens=median.tokens, seconds=median.seconds, tokens_per_s=median.rate,
                tokens_per_s_rounds=[m.rate for m in row.runs], ratio_vs_hf_batched=ratios[0], ratio_vs_batched_sampler=ratios[1],
                gpu_busy_share=share, decode_step_s=median.step_s, decode_step_estimated=median.step_estimated, stats=median.stats,
            )
    header = ["method", "N", "calls", "tokens", "seconds", "tokens/s", "vs HF batched", "vs today's sampler", "GPU busy", "ms/decode step"]
    full = [line for line in lines if len(line) == len(header)]
    widths = [max([len(h)] + [len(line[i]) for line in full]) for i, h in enumerate(header)]
    print()
    for line in [header, *lines]:
        if len(line) < len(header):
            print(f"{line[0]:{widths[0]}}  {line[1]:>{widths[1]}}  {line[2]}")
        else:
            print("  ".join(f"{cell:{widths[i]}}" if i == 0 else f"{cell:>{widths[i]}}" for i, cell in enumerate(line)))
    print("\n| " + " | ".join(header) + " |\n|" + "|".join(" --- " for _ in header) + "|")
    for line in lines:
        cells = line if len(line) == len(header) else [line[0], line[1], line[2], *[""] * (len(header) - 3)]
        print("| " + " | ".join(cells) + " |")
    print("\n(~: estimated as wall time / decode steps; today's sampler's steps are its forward calls, prefill included)")
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None, help="A converted transformers directory (default: the cached embedded model).")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--concurrency", default="8", help="Comma-separated numbers of concurrent calls (N).")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--distinct-prompts", action=argparse.BooleanOptionalAction, default=True, help="A different prompt per row (default on).")
    parser.add_argument("--lora", action="store_true", help="Wrap the model in the local trainer's LoRA (from --lora-preset).")
    parser.add_argument("--lora-preset", default="local_1gpu", help="The preset whose local.lora settings --lora uses.")
    parser.add_argument("--lora-targets", default=None, help="Override the preset's target modules: comma-separated names, or 'all' (7 projections).")
    parser.add_argument("--rounds", type=int, default=1, help="Timed rounds per concurrent method and N; the median is reported.")
    parser.add_argument("--sequential-calls", type=int, default=2, help="Calls timed for HF one-at-a-time generation.")
    parser.add_argument("--warmup-tokens", type=int, default=8, help="New tokens of the untimed warm-up of the eager methods.")
    parser.add_argument("--methods", default=",".join(LABELS), help=f"Comma-separated subset of: {', '.join(LABELS)}.")
    parser.add_argument("--no-profile", action="store_true", help="On CUDA, skip the profiled round (no GPU busy share).")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads for every method (default: half the cores).")
    parser.add_argument("--json", default=None, help="Also write the results to this JSON file.")
    args = parser.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(LABELS))
    if unknown:
        parser.error(f"unknown methods {unknown}; choose from {', '.join(LABELS)}")
    ns = [int(n) for n in args.concurrency.split(",")]
    args.threads = args.threads or max(1, (os.cpu_count() or 2) // 2)

    import torch
    import transformers

    torch.set_num_threads(args.threads)  # every method on the same thread count (the clients set the same)
    started = time.perf_counter()
    model, tokenizer, lora = load_model(args)
    device = next(model.parameters()).device
    print(f"model {type(model).__name__} on {device} ({args.dtype}, {torch.get_num_threads()} CPU threads, LoRA: {lora}), "
          f"loaded in {time.perf_counter() - started:.1f} s; transformers {transformers.__version__}, torch {torch.__version__}")
    print(f"{args.max_new_tokens} new tokens, temperature {args.temperature}, "
          f"{'distinct prompts' if args.distinct_prompts else 'one prompt for all rows'}, N = {ns}, {args.rounds} round(s)")

    rows: list[Row] = []
    begun = time.perf_counter()
    for key in methods:
        try:
            started = time.perf_counter()
            method = build_method(key, model, tokenizer, args, max(ns))
            built = time.perf_counter() - started
        except MethodUnavailable as exc:
            rows.extend([Row(key, 0, error=str(exc))] if key == "hf-sequential" else [Row(key, n, error=str(exc)) for n in ns])
            print(f"{LABELS[key]}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - a sampler that cannot be built is a row of the report
            message = f"failed to build: {type(exc).__name__}: {exc}".replace("\n", " ")[:300]
            rows.extend([Row(key, 0, error=message)] if key == "hf-sequential" else [Row(key, n, error=message) for n in ns])
            print(f"{LABELS[key]}: {message}")
            continue
        try:
            if key == "hf-sequential":
                row = Row(key, 0)
                measure(method, row, args.sequential_calls, 1, device, profile_n=0 if args.no_profile else 1)
                rows.append(row)
                median = row.median()
                note = f"{median.rate:,.1f} tokens/s" if median else row.error
                print(f"  [{time.perf_counter() - begun:5.0f} s] {LABELS[key]}, {args.sequential_calls} calls: {note}", flush=True)
            else:
                for n in ns:
                    row = Row(key, n)
                    measure(method, row, n, args.rounds, device, profile_n=0 if args.no_profile else n)
                    rows.append(row)
                    median = row.median()
                    note = f"{median.rate:,.1f} tokens/s" if median else row.error
                    extra = f", built in {built:.1f} s" if key == "continuous" and n == ns[0] else ""
                    warm = ""
                    if row.warmup_s is not None and key in ("continuous", "hf-continuous"):
                        capture = row.warmup_stats.get("graph_capture_s")
                        warm = f", warm-up {row.warmup_s:.2f} s" + (f" (graph capture {capture:.2f} s)" if capture else "")
                    print(f"  [{time.perf_counter() - begun:5.0f} s] {LABELS[key]}, N={n}: {note}{extra}{warm}", flush=True)
        finally:
            method.close()

    records = report(rows, ns)
    if args.json:
        results = {
            "device": str(device), "dtype": args.dtype, "lora": lora, "max_new_tokens": args.max_new_tokens,
            "temperature": args.temperature, "distinct_prompts": args.distinct_prompts, "rounds": args.rounds,
            "sequential_calls": args.sequential_calls, "cpu_threads": args.threads,
            "transformers": transformers.__version__, "torch": torch.__version__, "rows": records,
        }
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
