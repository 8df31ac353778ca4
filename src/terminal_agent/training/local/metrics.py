"""Metrics of the local trainer: one JSON line per step, PNG curves, and a wandb run (offline).

``metrics.jsonl`` in the run directory gets one object per step (appended, so a resumed run
continues the same file; lines of steps a resume re-runs are superseded by the later line).
:func:`plot_curves` draws ``curves.png``: reward mean/std, pass rate, groups dropped,
truncations, format errors, tokens, and env / model / update time. The wandb run is created in
``WANDB_MODE=offline`` unless told otherwise; its files live under ``run_dir/wandb``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

logger = logging.getLogger(__name__)

METRICS_FILE = "metrics.jsonl"
CURVES_FILE = "curves.png"

CURVES: list[tuple[str, list[str]]] = [
    ("reward", ["rollout/reward_mean", "rollout/reward_std"]),
    ("pass rate", ["rollout/pass_rate"]),
    ("groups dropped", ["batch/groups_dropped_zero_variance", "batch/groups_dropped_empty", "batch/masked_infrastructure"]),
    ("truncations", ["rollout/truncated", "rollout/length_cut_turns"]),
    ("format errors", ["rollout/format_errors"]),
    ("tokens", ["rollout/completion_tokens", "update/trained_tokens"]),
    ("time (s)", ["time/env_s", "time/model_s", "time/update_s"]),
    ("loss", ["actor/loss", "actor/grad_norm"]),
]


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    """The step records of ``run_dir``, one per step (the latest line wins for a step written twice)."""
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        return []
    by_step: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            by_step[int(record["step"])] = record
    return [by_step[s] for s in sorted(by_step)]


def skipped_steps_before(run_dir: Path, step: int) -> int:
    """``update/skipped_steps`` (the run's skipped optimizer steps so far) at the latest step before
    ``step`` in ``run_dir``'s metrics: where a resumed run continues the count (0 when none)."""
    earlier = [r for r in read_metrics(run_dir) if int(r["step"]) < step]
    return int(earlier[-1].get("update/skipped_steps") or 0) if earlier else 0


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _jsonable(value.item())
    return value


class MetricsLogger:
    """Writes step records to ``metrics.jsonl`` and (optionally) a wandb run."""

    def __init__(
        self,
        run_dir: Path,
        *,
        use_wandb: bool = True,
        wandb_mode: Literal["offline", "online", "disabled"] = "offline",
        project: str = "terminal-agent",
        name: str = "local",
        config: dict[str, Any] | None = None,
        wandb_id: str | None = None,
    ):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / METRICS_FILE
        self.wandb_run = None
        self.wandb_id = wandb_id
        if use_wandb and wandb_mode != "disabled":
            os.environ.setdefault("WANDB_MODE", wandb_mode)
            os.environ.setdefault("WANDB_SILENT", "true")
            import wandb

            self.wandb_run = wandb.init(
                project=project,
                name=name,
                id=wandb_id,
                resume="allow" if wandb_id else None,
                dir=str(self.run_dir),
                mode=wandb_mode,
                config=config or {},
                reinit="finish_previous",
            )
            self.wandb_id = self.wandb_run.id

    @property
    def wandb_dir(self) -> Path | None:
        if self.wandb_run is None:
            return None
        return Path(self.wandb_run.dir).parent

    def log(self, step: int, metrics: dict[str, Any]) -> None:
        record = {"step": step, **{k: _jsonable(v) for k, v in metrics.items()}}
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        if self.wandb_run is not None:
            self.wandb_run.log({k: v for k, v in record.items() if isinstance(v, (int, float)) and k != "step"}, step=step)

    def finish(self) -> None:
        if self.wandb_run is not None:
            self.wandb_run.finish()
            self.wandb_run = None


def plot_curves(run_dir: Path) -> Path | None:
    """Draw ``curves.png`` from ``metrics.jsonl`` (None when there are no steps yet)."""
    records = read_metrics(run_dir)
    if not records:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 4
    rows = math.ceil(len(CURVES) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    steps = [r["step"] for r in records]
    for ax, (title, keys) in zip(axes.flat, CURVES):
        for key in keys:
            values = [r.get(key) for r in records]
            if any(v is not None for v in values):
                ax.plot(steps, [float("nan") if v is None else v for v in values], marker="o", label=key.split("/")[-1])
        ax.set_title(title)
        ax.set_xlabel("step")
        if ax.lines:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(CURVES) :]:
        ax.axis("off")
    fig.tight_layout()
    out = Path(run_dir) / CURVES_FILE
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return out


def sampler_counters(client: Any) -> tuple[float, int, int, int] | None:
    """(busy seconds, generated tokens, batches, rows) of a local sampler, or None for other clients.

    For the generic batched sampler a batch is a decoded batch and rows are its calls; for the
    continuous-batching sampler a batch is a decode step and rows are the rows it advanced."""
    stats = getattr(client, "stats", None)
    if stats is None or not hasattr(stats, "busy_s"):
        return None
    if hasattr(stats, "decode_steps"):
        return float(stats.busy_s), int(stats.generated_tokens), int(stats.decode_steps), int(stats.row_steps)
    return float(stats.busy_s), int(stats.generated_tokens), int(stats.batches), int(stats.requests)


class UpdateOverlap:
    """How much of the update's work ran while the sampler was busy (streamed groups).

    The update's seconds and the sampler's busy seconds would count that time twice in the
    policy's busy time; :meth:`timed` measures it as the sampler's busy seconds that accrued
    during the update's own work (at most that work's length).
    """

    def __init__(self, client: Any):
        self.client = client
        self.overlap_s = 0.0

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        before, started = sampler_counters(self.client), time.monotonic()
        try:
            yield
        finally:
            after, took = sampler_counters(self.client), time.monotonic() - started
            if before is not None and after is not None:
                self.overlap_s += min(took, max(0.0, after[0] - before[0]))


def sampler_metrics(before: tuple[float, int, int, int] | None, after: tuple[float, int, int, int] | None,
                    metrics: dict[str, Any]) -> dict[str, Any]:
    """The step's sampler throughput and the policy's idle share (neither sampling nor updating).

    ``sampler/busy_s`` is the wall time the batched sampler spent decoding during the rollouts,
    ``sampler/tokens_per_s`` the tokens it sampled per busy second, ``sampler/mean_batch`` the model
    calls per decoded batch (rows per decode step for the continuous sampler); ``time/policy_idle_share`` is the share of the step in which the model
    did neither (the episodes were running commands in their sandboxes or being graded). Update work
    that ran while the sampler was busy (``time/update_overlap_s``, :class:`UpdateOverlap`) counts once.
    """
    if before is None or after is None:
        return {}
    busy, tokens, batches, requests = (after[i] - before[i] for i in range(4))
    step_s = float(metrics.get("time/step_s") or 0.0)
    update_s = float(metrics.get("time/update_s") or 0.0) - float(metrics.get("time/update_overlap_s") or 0.0)
    return {
        "sampler/busy_s": busy,
        "sampler/tokens": tokens,
        "sampler/tokens_per_s": tokens / busy if busy > 0 else None,
        "sampler/mean_batch": requests / batches if batches > 0 else None,
        "time/policy_idle_share": max(0.0, 1.0 - (busy + update_s) / step_s) if step_s > 0 else None,
    }


__all__ = [
    "CURVES", "CURVES_FILE", "METRICS_FILE", "MetricsLogger", "UpdateOverlap", "plot_curves", "read_metrics", "sampler_counters",
    "sampler_metrics",
]
