"""The local trainer's samplers against vLLM on the same model and load, in one run (issue 34, item 8).

Methods, each in its own subprocess (vLLM does not give the GPU back within a process):

- ``vllm``: vLLM's offline engine as a user runs it, the baseline: ``LLM.generate`` over the N prompts at
  once, CUDA graphs and torch.compile (``enforce_eager=False``); then, on the same engine, the same with
  ``logprobs=0`` (what a trainer needs back);
- ``continuous``: the project's continuous-batching sampler on the local trainer's policy (the LoRA of
  ``--lora-preset``, with a non-zero adapter), N concurrent calls from threads, seeded as the trainer
  calls it; then the same with the adapter disabled;
- ``vllm-client``: the new :class:`~terminal_agent.models.vllm_sampler.VLLMSamplerClient`
  (``local.sampler=vllm``) on the same policy, N concurrent seeded calls from threads: with the adapter as
  the trainer runs it (``call_seeds`` off: vLLM's engine RNG), with ``call_seeds`` on (a torch generator
  per row, which vLLM draws one row at a time), and with the adapter disabled.

The same load for every method: the N prompts of the sampling workload (``sampling_workload.py``, a
different prompt per row, as ``bench_sampling.py``), ``--max-new-tokens`` each with EOS ignored (every
row samples exactly that many tokens), temperature ``--temperature``, top-p 1, the action stop rule off.
One untimed warm-up round (graph capture, compile, adapter load), then ``--rounds`` timed rounds; the
median tokens/s is reported with its ratio to the vLLM baseline. Without CUDA, or without vLLM, the vLLM
methods are skipped with a message and the project's sampler still runs (CPU: a quick check of the script).

    python benchmarks/bench_sampler_vs_vllm.py --device cpu --dtype float32 --concurrency 4 --max-new-tokens 8 --rounds 1
    python benchmarks/bench_sampler_vs_vllm.py --model-dir DIR --device cuda --dtype bfloat16 --concurrency 64 --max-new-tokens 128 --rounds 3 --json OUT
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

METHODS = ["vllm", "continuous", "vllm-client"]
VLLM_METHODS = {"vllm", "vllm-client"}
#: Settings vLLM needs on a node without a network or flashinfer (set only where unset).
VLLM_ENVIRONMENT = {"VLLM_USE_FLASHINFER_SAMPLER": "0", "VLLM_HOST_IP": "127.0.0.1", "HF_HUB_OFFLINE": "1",
                    "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "TOKENIZERS_PARALLELISM": "false"}


# --- worker side: one method in this process -------------------------------------------------
def _model_dir(args: argparse.Namespace) -> Path:
    if args.model_dir:
        return Path(args.model_dir)
    from terminal_agent.models.embedded import ensure_embedded_model_cached

    return ensure_embedded_model_cached()


def _rounds(run: Callable[[], tuple[int, float]], rounds: int) -> dict[str, Any]:
    """One untimed warm-up run, then ``rounds`` timed runs: tokens and seconds of each, and the median rate."""
    started = time.perf_counter()
    run()
    warmup_s = time.perf_counter() - started
    timed = [run() for _ in range(rounds)]
    rates = [tokens / seconds for tokens, seconds in timed]
    return {"warmup_s": warmup_s, "tokens": [t for t, _ in timed], "seconds": [s for _, s in timed],
            "tokens_per_s_rounds": rates, "tokens_per_s": statistics.median(rates)}


def _trainer_policy(args: argparse.Namespace) -> tuple[Any, Any]:
    """The local trainer's policy (its own ``load_policy``) with a non-zero adapter, and its config."""
    import torch

    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.local.policy import load_policy
    from terminal_agent.training.preset_config import load_preset

    model_path = str(args.model_dir) if args.model_dir else "embedded"
    config = LocalTrainingConfig.from_preset(load_preset(args.lora_preset), model_path=model_path, device=args.device,
                                             dtype=args.dtype, num_threads=args.threads)
    policy = load_policy(config)
    torch.manual_seed(1)
    with torch.no_grad():  # a trained adapter is not zero: make the adapter's arithmetic count
        for name, parameter in policy.model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(mean=0.0, std=0.01)
    policy.model.eval()
    return policy, config


def _concurrent_round(client: Any, args: argparse.Namespace, seeded: bool, counter: list[int]) -> tuple[int, float]:
    """N calls from N threads at once: (tokens sampled, wall seconds)."""
    from sampling_workload import chats

    rows = chats(args.concurrency, True)
    replies: list[Any] = [None] * len(rows)
    errors: list[BaseException] = []
    counter[0] += 1

    def call(row: int) -> None:
        seed = counter[0] * 10_000 + row if seeded else None
        try:
            replies[row] = client.complete(rows[row], temperature=args.temperature, top_p=1.0,
                                           max_tokens=args.max_new_tokens, seed=seed)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(row,)) for row in range(len(rows))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    if errors:
        raise errors[0]
    return sum(len(r.completion_ids) for r in replies), seconds


def run_vllm_baseline(args: argparse.Namespace) -> list[dict[str, Any]]:
    from sampling_workload import prompt_ids
    from transformers import AutoTokenizer
    from vllm import LLM, SamplingParams

    model_dir = _model_dir(args)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    prompts = [{"prompt_token_ids": ids} for ids in prompt_ids(tokenizer, args.concurrency, True)]
    started = time.perf_counter()
    llm = LLM(model=str(model_dir), dtype=args.dtype, gpu_memory_utilization=args.gpu_memory_utilization,
              enforce_eager=False, skip_tokenizer_init=True, seed=0)
    startup_s = time.perf_counter() - started

    def run(logprobs: int | None) -> tuple[int, float]:
        params = SamplingParams(temperature=args.temperature, top_p=1.0, max_tokens=args.max_new_tokens, ignore_eos=True,
                                detokenize=False, logprobs=logprobs)
        began = time.perf_counter()
        outputs = llm.generate(prompts, params, use_tqdm=False)
        return sum(len(o.outputs[0].token_ids) for o in outputs), time.perf_counter() - began

    rows = [{"variant": "baseline", "label": "vLLM offline, CUDA graphs (baseline)", "startup_s": startup_s,
             **_rounds(lambda: run(None), args.rounds)},
            {"variant": "logprobs", "label": "vLLM offline, CUDA graphs, logprobs=0",
             **_rounds(lambda: run(0), args.rounds)}]
    llm.llm_engine.engine_core.shutdown()
    return rows


def run_continuous(args: argparse.Namespace) -> list[dict[str, Any]]:
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig

    started = time.perf_counter()
    policy, config = _trainer_policy(args)
    loaded_s = time.perf_counter() - started
    settings = ContinuousBatchingConfig(max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=1.0,
                                        stop_after_action=False, max_batch_size=args.concurrency, num_threads=args.threads)
    rows: list[dict[str, Any]] = []
    counter = [0]
    lora = f"LoRA r{config.lora_rank} on {','.join(config.lora_target_modules)}"
    for variant, label, disabled in (("lora-seeded", f"continuous sampler, {lora}, seeded (the trainer's calls)", False),
                                     ("no-adapter-seeded", "continuous sampler, adapter disabled, seeded", True)):
        context = policy.model.disable_adapter() if disabled else _nothing()
        with context:  # the fused projections read the adapter's state when the client is built
            client = ContinuousBatchingClient(policy.model, policy.tokenizer, settings)
            client._eos_ids = set()  # benchmark only: rows run past EOS to the cap, like vLLM's ignore_eos
            try:
                row = {"variant": variant, "label": label,
                       **_rounds(lambda: _concurrent_round(client, args, True, counter), args.rounds)}
                stats = client.stats
                row["ms_per_decode_step"] = 1000 * stats.decode_s / stats.decode_steps if stats.decode_steps else None
                rows.append(row)
            finally:
                client.close()
    rows[0]["startup_s"] = loaded_s
    return rows


def run_vllm_client(args: argparse.Namespace) -> list[dict[str, Any]]:
    from terminal_agent.models.vllm_sampler import VLLMSamplerClient, VLLMSamplerConfig
    from terminal_agent.training.local.policy import base_model_dir

    policy, config = _trainer_policy(args)
    settings = VLLMSamplerConfig(max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=1.0,
                                 stop_after_action=False, max_batch_size=args.concurrency,
                                 gpu_memory_utilization=args.gpu_memory_utilization, ignore_eos=True)
    started = time.perf_counter()
    client = VLLMSamplerClient(policy.model, policy.tokenizer, base_model_dir(config.model_path), settings)
    startup_s = time.perf_counter() - started
    rows: list[dict[str, Any]] = []
    counter = [0]
    lora = f"LoRA r{config.lora_rank} on {','.join(config.lora_target_modules)}"
    try:
        for variant, label, call_seeds, disabled in (
            ("lora", f"vLLM sampler client, {lora}, the trainer's calls (seeds not given to vLLM)", False, False),
            ("lora-call-seeds", f"vLLM sampler client, {lora}, call_seeds on (a generator per row)", True, False),
            ("no-adapter", "vLLM sampler client, adapter disabled", False, True),
        ):
            client.config = client.config.model_copy(update={"call_seeds": call_seeds})
            with policy.model.disable_adapter() if disabled else _nothing():
                rows.append({"variant": variant, "label": label,
                             **_rounds(lambda: _concurrent_round(client, args, True, counter), args.rounds)})
        rows[0].update(startup_s=startup_s, adapter_syncs=client.stats.adapter_syncs,
                       adapter_sync_s=client.stats.adapter_sync_s, stopped_by_rule=client.stats.stopped_by_rule,
                       largest_batch=client.stats.largest_batch)
    finally:
        client.close()
    return rows


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


WORKERS = {"vllm": run_vllm_baseline, "continuous": run_continuous, "vllm-client": run_vllm_client}


def worker_main(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(args.threads)
    try:
        rows = WORKERS[args.worker](args)
        result: dict[str, Any] = {"rows": rows}
    except Exception as exc:  # noqa: BLE001 - the parent prints it in the method's row
        import traceback

        traceback.print_exc()
        result = {"error": f"{type(exc).__name__}: {exc}".replace("\n", " ")[:400]}
    Path(args.result).write_text(json.dumps(result))


# --- parent side: one subprocess per method, the report ------------------------------------
def skip_reason(method: str, args: argparse.Namespace) -> str | None:
    if method not in VLLM_METHODS:
        return None
    if args.device != "cuda":
        return f"skipped: vLLM needs --device cuda (this run: {args.device})"
    from terminal_agent.models.vllm_sampler import VLLM_PIN, vllm_installed

    if not vllm_installed():
        return f"skipped: vLLM is not installed here (pip install {VLLM_PIN})"
    return None


def run_method(method: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-sampler-") as scratch:
        result_file = Path(scratch) / "result.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", method, "--result", str(result_file),
                   "--device", args.device, "--dtype", args.dtype, "--concurrency", str(args.concurrency),
                   "--max-new-tokens", str(args.max_new_tokens), "--rounds", str(args.rounds),
                   "--temperature", str(args.temperature), "--gpu-memory-utilization", str(args.gpu_memory_utilization),
                   "--lora-preset", args.lora_preset, "--threads", str(args.threads)]
        if args.model_dir:
            command += ["--model-dir", str(args.model_dir)]
        environment = {**VLLM_ENVIRONMENT, **os.environ}
        started = time.perf_counter()
        try:
            done = subprocess.run(command, env=environment, timeout=args.timeout_s)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {args.timeout_s} s"}
        wall = time.perf_counter() - started
        if not result_file.is_file():
            return {"error": f"the worker exited {done.returncode} without a result"}
        result = json.loads(result_file.read_text())
        result["process_s"] = wall
        return result


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    baseline = next((r.get("tokens_per_s") for r in rows if r["method"] == "vllm" and r.get("variant") == "baseline"), None)
    header = ["method", "tokens/round", "median s", "tokens/s (median)", "rounds", "vs vLLM", "warm-up s", "start s"]
    lines: list[list[str]] = []
    for row in rows:
        if "tokens_per_s" not in row:
            lines.append([row["label"], row.get("error", "not run")])
            continue
        rate = row["tokens_per_s"]
        row["ratio_vs_vllm"] = rate / baseline if baseline else None
        rounds = ", ".join(f"{r:,.0f}" for r in row["tokens_per_s_rounds"])
        lines.append([row["label"], f"{statistics.median(row['tokens']):,.0f}", f"{statistics.median(row['seconds']):.3f}",
                      f"{rate:,.1f}", rounds, "" if row["ratio_vs_vllm"] is None else f"{row['ratio_vs_vllm']:.2f}x",
                      f"{row['warmup_s']:.1f}", "" if row.get("startup_s") is None else f"{row['startup_s']:.1f}"])
    full = [line for line in lines if len(line) == len(header)]
    widths = [max([len(h)] + [len(line[i]) for line in full]) for i, h in enumerate(header)]
    print()
    for line in [header, *lines]:
        if len(line) < len(header):
            print(f"{line[0]:{widths[0]}}  {line[1]}")
        else:
            print("  ".join(f"{c:{widths[i]}}" if i == 0 else f"{c:>{widths[i]}}" for i, c in enumerate(line)))
    print("\n| " + " | ".join(header) + " |\n|" + "|".join(" --- " for _ in header) + "|")
    for line in lines:
        cells = line if len(line) == len(header) else [line[0], line[1], *[""] * (len(header) - 2)]
        print("| " + " | ".join(cells) + " |")
    if baseline is None:
        print("\n(no vLLM baseline in this run: ratios left blank)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None,
                        help="A transformers model directory (default: the cached embedded model).")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    parser.add_argument("--concurrency", type=int, default=64, help="Concurrent calls (prompts) N.")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3, help="Timed rounds per method; the median is reported.")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.3,
                        help="vLLM's share of the GPU (both vLLM methods).")
    parser.add_argument("--lora-preset", default="local_1gpu", help="The preset whose local.lora the policy gets.")
    parser.add_argument("--methods", default=",".join(METHODS), help=f"Comma-separated subset of: {', '.join(METHODS)}.")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: half the cores).")
    parser.add_argument("--timeout-s", type=int, default=360, help="Wall-clock limit of one method's subprocess.")
    parser.add_argument("--json", default=None, help="Also write the results to this JSON file.")
    parser.add_argument("--worker", default=None, choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--result", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.threads = args.threads or max(1, (os.cpu_count() or 2) // 2)
    if args.worker:
        worker_main(args)
        return
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        parser.error(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    print(f"{args.concurrency} prompts x {args.max_new_tokens} new tokens (EOS ignored), temperature {args.temperature}, "
          f"{args.dtype} on {args.device}, {args.rounds} round(s); model {args.model_dir or 'embedded'}", flush=True)
    rows: list[dict[str, Any]] = []
    began = time.perf_counter()
    for method in methods:
        reason = skip_reason(method, args)
        if reason is None:
            result = run_method(method, args)
            reason = result.get("error")
        if reason is not None:
            print(f"  [{time.perf_counter() - began:5.0f} s] {method}: {reason}", flush=True)
            rows.append({"method": method, "label": method, "error": reason})
            continue
        for row in result["rows"]:
            rows.append({"method": method, **row})
            elapsed = time.perf_counter() - began
            print(f"  [{elapsed:5.0f} s] {row['label']}: {row['tokens_per_s']:,.1f} tokens/s", flush=True)
    report(rows, args)
    if args.json:
        import importlib.metadata

        versions = {}
        for package in ("torch", "transformers", "peft", "vllm"):
            try:
                versions[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                versions[package] = None
        document = {"concurrency": args.concurrency, "max_new_tokens": args.max_new_tokens, "rounds": args.rounds,
                    "temperature": args.temperature, "dtype": args.dtype, "device": args.device,
                    "model_dir": args.model_dir, "gpu_memory_utilization": args.gpu_memory_utilization,
                    "lora_preset": args.lora_preset, "versions": versions, "rows": rows}
        Path(args.json).write_text(json.dumps(document, indent=2))


if __name__ == "__main__":
    main()
