#!/usr/bin/env python3
"""Per-step table of a verl run from verl's file logger (``VERL_FILE_LOGGER_PATH``: one JSON object a line).

    python training_scripts/device_run/summarize_verl_steps.py RUN/verl_metrics.jsonl [--json OUT.json]

Per step: wall time, generation (the Workflow's episodes: model and sandboxes together), the sandbox share
of it (the Workflow's ``env_s`` per episode, mean), old log-probs, actor update, weight sync into vLLM,
generated tokens per second of generation, peak GPU memory, reward, pass rate, groups kept (tasks whose
group had both passes and failures: the ones GRPO learns from) and the rollout-vs-actor probability gap.
A step logged twice (a resumed run) keeps its later line; torn lines are skipped. Then means over the
steps after the first (the first holds vLLM's and the sandboxes' cold start).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

#: column -> the verl / rLLM metric keys it reads (the first present wins)
COLUMNS: dict[str, tuple[str, ...]] = {
    "step_s": ("timing_s/step",),
    "gen_s": ("timing_s/gen", "timing_s/generate_sequences"),
    "env_s": ("batch/env_s",),
    "old_logp_s": ("timing_s/old_log_prob",),
    "update_s": ("timing_s/update_actor",),
    "sync_s": ("timing_s/update_weights", "timing_s/sync_weights", "timing_s/weight_sync"),
    "tokens": ("response_length/mean",),
    "gpu_gb": ("perf/max_memory_allocated_gb",),
    "reward": ("critic/score/mean", "critic/rewards/mean"),
    "pass": ("batch/pass_rate",),
    "groups_kept": ("batch/solve_partial",),
    "probs_gap_max": ("training/rollout_probs_diff_max",),
    "probs_gap_mean": ("training/rollout_probs_diff_mean",),
}


def read_steps(path: Path) -> dict[int, dict]:
    steps: dict[int, dict] = {}
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line of a killed run
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            steps[record["step"]] = record.get("data") or {}
    return steps


def row(step: int, data: dict) -> dict:
    out: dict = {"step": step}
    for column, keys in COLUMNS.items():
        out[column] = next((data[key] for key in keys if key in data), None)
    gen, batch_tokens = out["gen_s"], data.get("perf/total_num_tokens") or data.get("response_length/sum")
    out["gen_tokens_per_s"] = (batch_tokens / gen) if gen and batch_tokens else None
    out["throughput"] = data.get("perf/throughput")
    return out


def summarize(rows: list[dict]) -> dict:
    later = rows[1:] or rows
    means = {}
    for column in [*COLUMNS, "gen_tokens_per_s"]:
        values = [r[column] for r in later if isinstance(r.get(column), (int, float))]
        means[column] = statistics.fmean(values) if values else None
    return {"steps": len(rows), "mean_after_first": means}


def fmt(value, digits=2) -> str:
    return "-" if value is None else (f"{value:.{digits}f}" if isinstance(value, float) else str(value))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    data = read_steps(Path(args.metrics))
    rows = [row(step, data[step]) for step in sorted(data)]
    if not rows:
        print(f"{args.metrics}: no step logged", file=sys.stderr)
        return 1
    header = ["step", "step_s", "gen_s", "env_s", "old_logp_s", "update_s", "sync_s", "gpu_gb", "reward", "pass",
              "groups_kept", "probs_gap_max"]
    print(" ".join(f"{h:>11}" for h in header))
    for r in rows:
        print(" ".join(f"{fmt(r[h], 3):>11}" for h in header))
    summary = summarize(rows)
    print("mean after the first step: " + ", ".join(f"{k} {fmt(v, 3)}" for k, v in summary["mean_after_first"].items()))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, **summary, "keys_seen": sorted(data[max(data)])}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
