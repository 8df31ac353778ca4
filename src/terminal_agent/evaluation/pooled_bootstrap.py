"""Paired comparisons over several seeds: per seed, and pooled over seeds and tasks.

A learning experiment run with seeds 0, 1, 2 evaluates each seed's models on the same held-out tasks.
Per seed, a comparison is ``eval compare``'s paired bootstrap over tasks
(:func:`~terminal_agent.evaluation.stats.paired_bootstrap`). Pooled, every (seed, task) pair scored by
both models counts once, and the bootstrap is **stratified by seed**: each resample draws, within every
seed separately, as many of that seed's tasks (with replacement) as it has, then averages all the drawn
differences. A resample therefore never moves weight from one seed to another: the interval shows how
much the tasks vary within seeds, while each seed keeps its share. With one seed it is that seed's
paired bootstrap, draw for draw.

:func:`pooled_analysis` runs the comparisons of several models on several task groups (e.g. held-out
family instances apart from hand-written tasks) and returns a JSON-safe document;
:func:`pooled_markdown` renders it as tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from terminal_agent.evaluation.results import RunResults
from terminal_agent.evaluation.stats import (
    DEFAULT_BOOTSTRAP_SAMPLES,
    _bootstrap_means,
    _per_task_means,
    _percentile_interval,
    paired_bootstrap,
)

PerTask = Mapping[str, Sequence[float]]
"""Task id -> values of its scored trials (rewards, or 1/0 for pass)."""

METRICS = ("reward", "pass")
ALL_TASKS = "all held-out tasks"
"""The group that :func:`pooled_analysis` always adds: every task, whatever its group."""


@dataclass(frozen=True)
class PooledComparison:
    """Did model B beat model A, pooled over seeds? ``difference`` is B minus A."""

    n_seeds: int
    """Seeds with at least one task scored by both models."""
    n_pairs: int
    """(seed, task) pairs scored by both models: what the pooled means average over."""
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    prob_improvement: float
    """Fraction of bootstrap samples whose difference is > 0."""
    confidence: float = 0.95
    tasks_per_seed: dict[str, int] = field(default_factory=dict)
    """Seed -> tasks it contributes (0 when the two models share none there)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _paired_means(per_task_a: PerTask, per_task_b: PerTask) -> tuple[np.ndarray, np.ndarray]:
    """Per-task means of A and B over the tasks both scored (sorted by task id, as paired_bootstrap does)."""
    names_a, _ = _per_task_means(per_task_a)
    names_b, _ = _per_task_means(per_task_b)
    common = sorted(set(names_a) & set(names_b))
    a = np.array([float(np.mean(per_task_a[t])) for t in common], dtype=float)
    b = np.array([float(np.mean(per_task_b[t])) for t in common], dtype=float)
    return a, b


def stratified_paired_bootstrap(
    per_seed_a: Mapping[str, PerTask],
    per_seed_b: Mapping[str, PerTask],
    *,
    confidence: float = 0.95,
    n_boot: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> PooledComparison:
    """Paired bootstrap of ``mean(B) - mean(A)`` over every (seed, task) pair, resampling tasks within seeds.

    ``per_seed_a`` / ``per_seed_b`` map a seed's label to its per-task values; seeds are taken in
    ``per_seed_a``'s order, and a seed missing from ``per_seed_b`` contributes nothing. Each resample draws
    every seed's tasks with replacement from that seed alone (see the module docstring); ``seed`` seeds the
    draws.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    strata: list[tuple[np.ndarray, np.ndarray]] = []
    tasks_per_seed: dict[str, int] = {}
    for label, values_a in per_seed_a.items():
        a, b = _paired_means(values_a, per_seed_b.get(label, {}))
        tasks_per_seed[str(label)] = len(a)
        if len(a):
            strata.append((a, b))
    if not strata:
        nan = math.nan
        return PooledComparison(0, 0, nan, nan, nan, nan, nan, nan, confidence, tasks_per_seed)
    all_a = np.concatenate([a for a, _ in strata])
    all_b = np.concatenate([b for _, b in strata])
    n_pairs = len(all_a)
    point = float((all_b - all_a).mean())
    rng = np.random.default_rng(seed)
    # the same resampling as paired_bootstrap, once per seed; a seed's weight is its share of the pairs
    weighted = [len(a) * _bootstrap_means(b - a, n_boot, rng) for a, b in strata]
    samples = sum(weighted[1:], weighted[0]) / n_pairs  # started on an array (strata is not empty): an array
    if n_pairs == 1:
        low = high = point
    else:
        low, high = _percentile_interval(samples, confidence)
    return PooledComparison(
        n_seeds=len(strata),
        n_pairs=n_pairs,
        mean_a=float(all_a.mean()),
        mean_b=float(all_b.mean()),
        difference=point,
        ci_low=low,
        ci_high=high,
        prob_improvement=float((samples > 0).mean()),
        confidence=confidence,
        tasks_per_seed=tasks_per_seed,
    )


def _metric_values(run: RunResults, metric: str) -> dict[str, list[float]]:
    if metric == "reward":
        return run.rewards_by_task()
    if metric == "pass":
        return run.passes_by_task()
    raise ValueError(f"metric must be 'reward' or 'pass', got {metric!r}")


def _only(values: PerTask, keep: Callable[[str], bool]) -> dict[str, Sequence[float]]:
    return {task: v for task, v in values.items() if keep(task)}


def pooled_analysis(
    runs: Mapping[str, Mapping[str, RunResults]],
    comparisons: Sequence[tuple[str, str, str, str]],
    groups: Mapping[str, Callable[[str], bool]],
    *,
    confidence: float = 0.95,
    n_boot: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Per-seed and pooled comparisons of models on task groups, as a JSON-safe document.

    ``runs``: seed label -> model name -> its evaluation (a seed may lack a model: it is left out of that
    model's comparisons). ``comparisons``: ``(key, title, a, b)`` rows, each compared as B minus A.
    ``groups``: group name -> which task ids belong to it; the group ``ALL_TASKS`` (every task) comes first.

    The document: ``seeds``, ``confidence``, ``n_boot``, and per group ``tasks`` (per seed, the task
    ids any of its models ran), ``means`` (per model, per seed and pooled: the mean over tasks of
    per-task means, on each metric) and ``comparisons`` (per key: ``title``, ``a``, ``b``, and per
    metric ``per_seed`` (:class:`~terminal_agent.evaluation.stats.PairedComparison` dicts) and
    ``pooled`` (:class:`PooledComparison`)).
    """
    seeds = [str(label) for label in runs]
    document: dict[str, Any] = {"seeds": seeds, "confidence": confidence, "n_boot": n_boot, "groups": {}}
    for group, keep in {ALL_TASKS: (lambda task: True), **groups}.items():
        tasks = {label: sorted({task for run in models.values() for task in run.task_ids() if keep(task)})
                 for label, models in runs.items()}
        entry: dict[str, Any] = {"tasks": tasks, "means": {}, "comparisons": {}}
        values = {
            metric: {label: {name: _only(_metric_values(run, metric), keep) for name, run in models.items()}
                     for label, models in runs.items()}
            for metric in METRICS
        }
        model_names = list(dict.fromkeys(name for models in runs.values() for name in models))
        for name in model_names:
            entry["means"][name] = {
                metric: _means(
                    {label: by_model[name] for label, by_model in values[metric].items() if name in by_model})
                for metric in METRICS
            }
        for key, title, a, b in comparisons:
            present = [label for label, models in runs.items() if a in models and b in models]
            if not present:
                continue
            row: dict[str, Any] = {"title": title, "a": a, "b": b}
            for metric in METRICS:
                per_a = {label: values[metric][label][a] for label in present}
                per_b = {label: values[metric][label][b] for label in present}
                row[metric] = {
                    "per_seed": {label: paired_bootstrap(per_a[label], per_b[label], confidence=confidence,
                                                         n_boot=n_boot, seed=seed).to_dict() for label in present},
                    "pooled": stratified_paired_bootstrap(per_a, per_b, confidence=confidence, n_boot=n_boot,
                                                          seed=seed).to_dict(),
                }
            entry["comparisons"][key] = row
        document["groups"][group] = entry
    return document


def _means(per_seed: Mapping[str, PerTask]) -> dict[str, Any]:
    """Per seed and pooled (every (seed, task) pair once): the mean of per-task means, ``None`` without tasks."""
    by_seed: dict[str, float | None] = {}
    pooled: list[float] = []
    for label, values in per_seed.items():
        _, means = _per_task_means(values)
        by_seed[label] = float(means.mean()) if len(means) else None
        pooled.extend(means.tolist())
    return {"per_seed": by_seed, "pooled": float(np.mean(pooled)) if pooled else None}


def _num(value: float | None, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _interval(c: Mapping[str, Any]) -> str:
    if not c.get("n_tasks", c.get("n_pairs")):
        return "n/a"
    return f"{_num(c['difference'], True)} [{_num(c['ci_low'], True)}, {_num(c['ci_high'], True)}]"


def pooled_markdown(document: Mapping[str, Any], *, title: str = "Over seeds") -> str:
    """Markdown tables of a :func:`pooled_analysis` document: per group, the models' means and the comparisons."""
    seeds = document["seeds"]
    conf = int(round(document["confidence"] * 100))
    lines = [
        f"# {title}",
        "",
        f"Seeds {', '.join(seeds)}. Per seed: paired bootstrap over tasks. Pooled: every (seed, task) pair once, "
        f"resampling tasks within each seed ({document['n_boot']:,} resamples); {conf}% intervals, B minus A.",
    ]
    for group, entry in document["groups"].items():
        counts = ", ".join(f"seed {label}: {len(ids)}" for label, ids in entry["tasks"].items())
        lines += ["", f"## {group}", "", f"Tasks: {counts}."]
        if not any(entry["tasks"].values()):
            continue
        lines += ["", "| model | metric | " + " | ".join(f"seed {s}" for s in seeds) + " | pooled |",
                  "| --- | --- | " + " | ".join("---" for _ in seeds) + " | --- |"]
        for name, by_metric in entry["means"].items():
            for metric in METRICS:
                means = by_metric[metric]
                cells = [_num(means["per_seed"].get(s)) if s in means["per_seed"] else "-" for s in seeds]
                lines.append(f"| {name} | {metric} | " + " | ".join(cells) + f" | {_num(means['pooled'])} |")
        lines += ["", "| comparison (B - A) | metric | " + " | ".join(f"seed {s}" for s in seeds)
                  + " | pooled | P(B > A) pooled |",
                  "| --- | --- | " + " | ".join("---" for _ in seeds) + " | --- | --- |"]
        for row in entry["comparisons"].values():
            for metric in METRICS:
                result = row[metric]
                cells = [_interval(result["per_seed"][s]) if s in result["per_seed"] else "-" for s in seeds]
                pooled = result["pooled"]
                lines.append(f"| {row['title']} | {metric} | " + " | ".join(cells)
                             + f" | **{_interval(pooled)}** | {_num(pooled['prob_improvement'])} |")
    return "\n".join(lines) + "\n"


__all__ = ["ALL_TASKS", "METRICS", "PooledComparison", "pooled_analysis", "pooled_markdown", "stratified_paired_bootstrap"]
