#!/usr/bin/env python3
"""Step times, policy idle share, sampler throughput and skipped updates of a local run's ``metrics.jsonl``.

    python training_scripts/device_run/summarize_step_times.py RUN_DIR/metrics.jsonl [--json]

What the trainer records per step (``local.trainer.step_metrics``, ``local.metrics.sampler_metrics``):
``time/step_s`` (the step's wall time: rollouts, selection, update), ``time/rollout_wall_s`` (the
rollouts' wall time), ``time/update_s`` (the GRPO update), ``sampler/busy_s`` (wall time in which the
policy's sampler had work in flight), ``sampler/tokens`` (tokens it sampled), ``update/rows`` and
``update/stepped`` (0 when there were rows but the gradient norm was not finite: a skipped update).

Policy idle share: the share of step wall time in which the policy neither sampled nor updated,
``1 - (sampler/busy_s + time/update_s - time/update_overlap_s) / time/step_s`` (the overlap: update
work of groups streamed while the sampler was busy, counted once). The headline pools the steps (sums over all
steps, so long steps weigh more, as in docs/training.md); the per-step range is printed beside it.
The file is read as the trainer reads it: a step written twice (a resumed run) keeps its later line.
Standard library only, so it runs anywhere the file is.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any


def read_step_records(path: str | Path) -> list[dict[str, Any]]:
    """One record per step, in step order; the later line wins for a step written twice."""
    by_step: dict[int, dict[str, Any]] = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            by_step[int(record["step"])] = record
    return [by_step[step] for step in sorted(by_step)]


def _values(records: list[dict[str, Any]], key: str) -> list[float]:
    return [float(r[key]) for r in records if r.get(key) is not None]


def _spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "min": None, "max": None}
    return {"mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def _skipped(record: dict[str, Any]) -> bool:
    """An update that had rows but made no optimizer step (non-finite gradient norm)."""
    if record.get("update/skipped") is not None:  # a later trainer may count it itself
        return bool(record["update/skipped"])
    return int(record.get("update/rows") or 0) > 0 and not int(record.get("update/stepped") or 0)


def _update_alone(record: dict[str, Any]) -> float:
    """The update's seconds that did not overlap the sampler's busy time (streamed groups count once)."""
    return float(record.get("time/update_s") or 0.0) - float(record.get("time/update_overlap_s") or 0.0)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the module docstring, from the step records."""
    step = _values(records, "time/step_s")
    with_sampler = [r for r in records if r.get("sampler/busy_s") is not None and r.get("time/step_s")]
    busy = sum(float(r["sampler/busy_s"]) for r in with_sampler)
    update_in_those = sum(_update_alone(r) for r in with_sampler)
    step_in_those = sum(float(r["time/step_s"]) for r in with_sampler)
    tokens = sum(int(r.get("sampler/tokens") or 0) for r in with_sampler)
    rollout_wall = sum(float(r.get("time/rollout_wall_s") or 0.0) for r in with_sampler)
    per_step_idle = [max(0.0, 1.0 - (float(r["sampler/busy_s"]) + _update_alone(r)) / float(r["time/step_s"]))
                     for r in with_sampler]
    return {
        "steps": len(records),
        "first_step": records[0]["step"] if records else None,
        "last_step": records[-1]["step"] if records else None,
        "step_s": _spread(step),
        "step_s_after_first": _spread(step[1:]),
        "rollout_wall_s": _spread(_values(records, "time/rollout_wall_s")),
        "update_s": _spread(_values(records, "time/update_s")),
        "update_overlap_s": _spread(_values(records, "time/update_overlap_s")),
        "update_after_rollouts_s": _spread(_values(records, "time/update_after_rollouts_s")),
        "sampler_busy_s": _spread(_values(records, "sampler/busy_s")),
        "rollout_head_s": _spread(_values(records, "time/rollout_head_s")),
        "rollout_tail_s": _spread(_values(records, "time/rollout_tail_s")),
        "policy_idle_share": (max(0.0, 1.0 - (busy + update_in_those) / step_in_those) if step_in_those > 0 else None),
        "policy_idle_share_per_step": _spread(per_step_idle),
        "sampled_tokens": tokens,
        "tokens_per_s_busy": tokens / busy if busy > 0 else None,
        "tokens_per_s_rollout_wall": tokens / rollout_wall if rollout_wall > 0 else None,
        "trained_tokens": sum(int(r.get("update/trained_tokens") or 0) for r in records),
        "optimizer_steps": sum(int(r.get("update/stepped") or 0) for r in records),
        "skipped_optimizer_steps": sum(1 for r in records if _skipped(r)),
        "skipped_at_steps": [r["step"] for r in records if _skipped(r)],
        # the trainer's own running count, where it writes one (its last step's value)
        "trainer_skipped_steps": next((r["update/skipped_steps"] for r in reversed(records)
                                       if r.get("update/skipped_steps") is not None), None),
        "steps_without_rows": sum(1 for r in records if not int(r.get("update/rows") or 0)),
        "episodes": sum(int(r.get("rollout/episodes") or 0) for r in records),
        "scored_episodes": sum(int(r.get("rollout/scored") or 0) for r in records),
        "groups_kept": sum(int(r.get("batch/groups_kept") or 0) for r in records),
        "groups": sum(int(r.get("batch/groups") or 0) for r in records),
    }


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_summary(s: dict[str, Any]) -> str:
    """The summary as a few plain lines."""
    def spread(d: dict[str, Any], digits: int = 1) -> str:
        return f"mean {_num(d['mean'], digits)}, min {_num(d['min'], digits)}, max {_num(d['max'], digits)}"

    idle = s["policy_idle_share"]
    lines = [
        f"steps {s['first_step']}..{s['last_step']} ({s['steps']} records); episodes {s['episodes']}, scored {s['scored_episodes']}; "
        f"groups kept {s['groups_kept']}/{s['groups']}",
        f"step time (s): {spread(s['step_s'])}; after the first step: {spread(s['step_s_after_first'])}",
        f"rollout wall (s): {spread(s['rollout_wall_s'])}; update (s): {spread(s['update_s'], 2)}; "
        f"sampler busy (s): {spread(s['sampler_busy_s'])}",
        f"update overlapping the sampler (s): {spread(s['update_overlap_s'], 2)}; "
        f"after the rollouts (s): {spread(s['update_after_rollouts_s'], 2)}",
        f"rollout head, start to first model call (s): {spread(s['rollout_head_s'], 2)}; "
        f"tail, last reply to end (s): {spread(s['rollout_tail_s'], 2)}",
        f"policy idle share: {'-' if idle is None else f'{idle:.1%}'} pooled; per step "
        + spread({k: (None if v is None else 100 * v) for k, v in s["policy_idle_share_per_step"].items()}) + " %",
        f"sampled tokens {s['sampled_tokens']}: {_num(s['tokens_per_s_busy'], 0)} tokens/s while busy, "
        f"{_num(s['tokens_per_s_rollout_wall'], 0)} tokens/s over the rollout wall time; trained tokens {s['trained_tokens']}",
        f"optimizer steps {s['optimizer_steps']}; skipped (non-finite gradient) {s['skipped_optimizer_steps']} "
        f"{s['skipped_at_steps'] or ''}(trainer's count: {s['trainer_skipped_steps'] if s['trainer_skipped_steps'] is not None else '-'}); "
        f"steps with nothing to train {s['steps_without_rows']}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics", help="a run's metrics.jsonl (or its run directory)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    path = Path(args.metrics)
    if path.is_dir():
        path = path / "metrics.jsonl"
    if not path.is_file():
        print(f"error: no such file {path}", file=sys.stderr)
        return 2
    summary = summarize(read_step_records(path))
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
