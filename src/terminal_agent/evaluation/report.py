"""Headline numbers and markdown reports of one run, or of two runs compared."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from terminal_agent.evaluation.stats import (
    DEFAULT_BOOTSTRAP_SAMPLES,
    PairedComparison,
    bootstrap_mean_ci,
    mean_pass_at_k,
    paired_bootstrap,
)
from terminal_agent.evaluation.results import RunResults


def pass_at_k_values(attempts: int) -> list[int]:
    """The k reported for a run with ``attempts`` attempts per task: 1, 2, 4, ... and ``attempts``."""
    ks, k = [], 1
    while k < attempts:
        ks.append(k)
        k *= 2
    if attempts >= 1:
        ks.append(attempts)
    return ks


def summarize(results: RunResults, *, confidence: float = 0.95, n_boot: int = DEFAULT_BOOTSTRAP_SAMPLES, seed: int = 0) -> dict[str, Any]:
    """Headline numbers of a run (what ``results.json``'s ``summary`` holds)."""
    trials = results.trials
    scored = [t for t in trials if t.scored]
    reward = bootstrap_mean_ci(results.rewards_by_task(), confidence=confidence, n_boot=n_boot, seed=seed)
    pass_rate = bootstrap_mean_ci(results.passes_by_task(), confidence=confidence, n_boot=n_boot, seed=seed)
    counts = results.pass_counts()
    max_attempts = max((n for n, _ in counts.values()), default=0)
    env_time = sum(t.env_time_s for t in trials)
    model_time = sum(t.model_time_s for t in trials)
    termination: dict[str, int] = {}
    for trial in trials:
        termination[trial.termination_reason or "unknown"] = termination.get(trial.termination_reason or "unknown", 0) + 1
    return {
        "n_tasks": len(results.task_ids()),
        "n_trials": len(trials),
        "n_scored": len(scored),
        "n_errors": len(trials) - len(scored),
        "errors_by_kind": results.errors_by_kind(),
        "mean_reward": reward.to_dict(),
        "pass_rate": pass_rate.to_dict(),
        "pass_at_k": {str(k): mean_pass_at_k(counts, k) for k in pass_at_k_values(max_attempts)},
        "mean_turns": float(np.mean([t.turns for t in scored])) if scored else math.nan,
        "prompt_tokens": sum(t.prompt_tokens for t in trials),
        "completion_tokens": sum(t.completion_tokens for t in trials),
        "env_time_s": env_time,
        "model_time_s": model_time,
        "termination_reasons": dict(sorted(termination.items())),
        "wall_s": results.run.wall_s,
        "episodes_per_minute": (len(trials) / results.run.wall_s * 60.0) if results.run.wall_s > 0 else math.nan,
    }


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def _ci(estimate: dict[str, Any]) -> str:
    return f"{_fmt(estimate['value'])} [{_fmt(estimate['ci_low'])}, {_fmt(estimate['ci_high'])}]"


def run_report_markdown(results: RunResults, summary: dict[str, Any] | None = None) -> str:
    """A markdown report of one run: headline numbers, errors, timings and a per-task table."""
    summary = summary or summarize(results)
    run = results.run
    conf = int(round(summary["mean_reward"]["confidence"] * 100))
    lines = [
        f"# Evaluation: {run.model}",
        "",
        f"Run `{run.run_id}` - {summary['n_tasks']} tasks x {run.attempts} attempt(s), max {run.max_steps} steps, "
        f"concurrency {run.concurrency}, wall {run.wall_s:.1f} s.",
        "",
        "| metric | value |",
        "|---|---|",
        f"| mean reward ({conf}% CI, task bootstrap) | {_ci(summary['mean_reward'])} |",
        f"| pass rate ({conf}% CI) | {_ci(summary['pass_rate'])} |",
    ]
    for k, value in summary["pass_at_k"].items():
        lines.append(f"| pass@{k} | {_fmt(value)} |")
    lines += [
        f"| scored trials | {summary['n_scored']} / {summary['n_trials']} |",
        f"| infrastructure errors (not scored) | {summary['n_errors']} {summary['errors_by_kind'] or ''} |",
        f"| mean turns | {_fmt(summary['mean_turns'], 2)} |",
        f"| tokens (prompt / completion) | {summary['prompt_tokens']} / {summary['completion_tokens']} |",
        f"| env time / model time (s, summed over trials) | {summary['env_time_s']:.1f} / {summary['model_time_s']:.1f} |",
        f"| episodes per minute | {_fmt(summary['episodes_per_minute'], 2)} |",
        f"| termination reasons | {summary['termination_reasons']} |",
        "",
        "## Per task",
        "",
        "| task | attempts | passes | mean reward | errors |",
        "|---|---|---|---|---|",
    ]
    rewards = results.rewards_by_task()
    counts = results.pass_counts()
    for task in results.task_ids():
        n, c = counts.get(task, (0, 0))
        errors = sum(1 for t in results.trials if t.task_id == task and not t.scored)
        mean = float(np.mean(rewards[task])) if rewards.get(task) else math.nan
        lines.append(f"| {task} | {n + errors} | {c} | {_fmt(mean)} | {errors} |")
    error_trials = [t for t in results.trials if not t.scored]
    if error_trials:
        lines += ["", "## Errors (not scored)", ""]
        for trial in error_trials:
            kind = trial.error.kind if trial.error else "unknown"
            message = (trial.error.message if trial.error else "").splitlines()[0:1]
            lines.append(f"- `{trial.task_id}` attempt {trial.attempt}: **{kind}** {message[0] if message else ''}")
    return "\n".join(lines) + "\n"


def compare_runs(
    a: RunResults, b: RunResults, *, metric: str = "reward", confidence: float = 0.95, n_boot: int = DEFAULT_BOOTSTRAP_SAMPLES, seed: int = 0
) -> PairedComparison:
    """Paired per-task bootstrap of B minus A on ``reward`` or ``pass``."""
    if metric == "reward":
        return paired_bootstrap(a.rewards_by_task(), b.rewards_by_task(), confidence=confidence, n_boot=n_boot, seed=seed)
    if metric == "pass":
        return paired_bootstrap(a.passes_by_task(), b.passes_by_task(), confidence=confidence, n_boot=n_boot, seed=seed)
    raise ValueError(f"metric must be 'reward' or 'pass', got {metric!r}")


def comparison_markdown(a: RunResults, b: RunResults, comparison: PairedComparison, metric: str = "reward") -> str:
    conf = int(round(comparison.confidence * 100))
    lines = [
        f"# Comparison on {metric}: B = {b.run.model} vs A = {a.run.model}",
        "",
        f"Paired bootstrap over {comparison.n_tasks} common tasks.",
        "",
        "| | value |",
        "|---|---|",
        f"| A mean | {_fmt(comparison.mean_a)} |",
        f"| B mean | {_fmt(comparison.mean_b)} |",
        f"| B - A ({conf}% CI) | {_fmt(comparison.difference)} [{_fmt(comparison.ci_low)}, {_fmt(comparison.ci_high)}] |",
        f"| P(B - A > 0) over resamples | {_fmt(comparison.prob_improvement)} |",
    ]
    if comparison.only_in_a or comparison.only_in_b:
        lines += [
            "",
            f"Left out (not scored in both): only A: {', '.join(comparison.only_in_a) or '-'}; "
            f"only B: {', '.join(comparison.only_in_b) or '-'}.",
        ]
    return "\n".join(lines) + "\n"
