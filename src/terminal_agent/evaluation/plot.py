"""PNG plot of a run: per-task mean reward with the overall mean and its confidence band."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from terminal_agent.evaluation.report import summarize
from terminal_agent.evaluation.results import RunResults


def plot_run(results: RunResults, path: Path, summary: dict[str, Any] | None = None) -> Path:
    """Write a bar chart of per-task mean reward (error-only tasks shown as hatched zero bars)."""
    import matplotlib

    matplotlib.use("Agg")  # no display; safe in threads and CI
    import matplotlib.pyplot as plt

    summary = summary or summarize(results)
    tasks = results.task_ids()
    rewards = results.rewards_by_task()
    means = [float(np.mean(rewards[t])) if rewards.get(t) else 0.0 for t in tasks]
    unscored = [t not in rewards for t in tasks]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(tasks) + 2), 4.0))
    bars = ax.bar(range(len(tasks)), means, color="#4C72B0")
    for bar, missing in zip(bars, unscored):
        if missing:
            bar.set_hatch("//")
            bar.set_facecolor("#dddddd")
    estimate = summary["mean_reward"]
    if estimate["value"] is not None and estimate["value"] == estimate["value"]:
        ax.axhline(estimate["value"], color="#C44E52", label=f"mean {estimate['value']:.3f}")
        ax.axhspan(estimate["ci_low"], estimate["ci_high"], color="#C44E52", alpha=0.15, label="95% CI")
        ax.legend(loc="upper right")
    ax.set_xticks(range(len(tasks)))
    ax.set_xticklabels(tasks, rotation=60, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean reward")
    ax.set_title(f"{results.run.model} - {len(results.trials)} trials")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
