"""Statistics of evaluation runs: bootstrap confidence intervals, pass@k, paired comparisons.

Trials of one task are not independent (same instruction, same environment), so the intervals
resample *tasks* (a cluster bootstrap): each bootstrap sample draws tasks with replacement and
averages their per-task means. With one attempt per task this is the ordinary bootstrap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DEFAULT_BOOTSTRAP_SAMPLES = 10_000
"""Bootstrap resamples used when the caller does not say."""


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile-bootstrap confidence interval."""

    value: float
    """Mean over tasks of the per-task means (equal weight per task); ``nan`` with no data."""
    ci_low: float
    ci_high: float
    n: int
    """How many tasks (clusters) it rests on."""
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PairedComparison:
    """Did policy B beat policy A on the same tasks? ``difference`` is B minus A."""

    n_tasks: int
    """Tasks present (with at least one scored trial) in both runs."""
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    prob_improvement: float
    """Fraction of bootstrap samples whose difference is > 0."""
    confidence: float = 0.95
    only_in_a: tuple[str, ...] = ()
    only_in_b: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["only_in_a"] = list(self.only_in_a)
        data["only_in_b"] = list(self.only_in_b)
        return data


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` attempts of which ``c`` passed: ``1 - C(n-c, k) / C(n, k)``.

    Computed as a running product so large ``n`` neither overflows nor loses precision.
    """
    if n < 0 or c < 0 or k < 1:
        raise ValueError(f"pass_at_k needs n >= 0, c >= 0, k >= 1 (got n={n}, c={c}, k={k})")
    if c > n:
        raise ValueError(f"pass_at_k: more passes ({c}) than attempts ({n})")
    if k > n:
        raise ValueError(f"pass_at_k: k={k} is larger than the number of attempts n={n}")
    if n - c < k:
        return 1.0
    # C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i)
    failure = 1.0
    for i in range(n - c + 1, n + 1):
        failure *= 1.0 - k / i
    return 1.0 - failure


def mean_pass_at_k(counts: Mapping[str, tuple[int, int]], k: int) -> float:
    """Average of :func:`pass_at_k` over tasks; ``counts`` maps task -> (attempts, passes).

    Tasks with fewer than ``k`` attempts are skipped (pass@k is undefined for them).
    """
    values = [pass_at_k(n, c, k) for n, c in counts.values() if n >= k]
    return float(np.mean(values)) if values else math.nan


def _per_task_means(per_task: Mapping[str, Sequence[float]]) -> tuple[list[str], np.ndarray]:
    names = sorted(task for task, values in per_task.items() if len(values) > 0)
    return names, np.array([float(np.mean(per_task[task])) for task in names], dtype=float)


def _percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _bootstrap_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_boot`` resamples (with replacement) of ``values``; row ``b`` uses draw ``b``."""
    indices = rng.integers(0, len(values), size=(n_boot, len(values)))
    means: np.ndarray = values[indices].mean(axis=1)  # numpy's stubs type an unshaped mean as Any
    return means


def bootstrap_mean_ci(
    per_task: Mapping[str, Sequence[float]],
    *,
    confidence: float = 0.95,
    n_boot: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> Estimate:
    """Mean of per-task means with a task-clustered percentile bootstrap interval.

    ``per_task`` maps task id -> values of its scored trials (rewards, or 1/0 for pass).
    Tasks with no values are ignored. One task gives a zero-width interval.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    _, means = _per_task_means(per_task)
    if len(means) == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, confidence)
    point = float(means.mean())
    if len(means) == 1:
        return Estimate(point, point, point, 1, confidence)
    samples = _bootstrap_means(means, n_boot, np.random.default_rng(seed))
    low, high = _percentile_interval(samples, confidence)
    return Estimate(point, low, high, len(means), confidence)


def paired_bootstrap(
    per_task_a: Mapping[str, Sequence[float]],
    per_task_b: Mapping[str, Sequence[float]],
    *,
    confidence: float = 0.95,
    n_boot: int = DEFAULT_BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> PairedComparison:
    """Paired per-task bootstrap of ``mean(B) - mean(A)`` over the tasks both runs scored.

    Each resample draws tasks with replacement and keeps the A and B means of a task together,
    so task difficulty cancels out; ``prob_improvement`` is the share of resamples above 0.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    names_a, _ = _per_task_means(per_task_a)
    names_b, _ = _per_task_means(per_task_b)
    common = sorted(set(names_a) & set(names_b))
    only_a = tuple(sorted(set(names_a) - set(names_b)))
    only_b = tuple(sorted(set(names_b) - set(names_a)))
    if not common:
        nan = math.nan
        return PairedComparison(0, nan, nan, nan, nan, nan, nan, confidence, only_a, only_b)
    a = np.array([float(np.mean(per_task_a[t])) for t in common])
    b = np.array([float(np.mean(per_task_b[t])) for t in common])
    diffs = b - a
    point = float(diffs.mean())
    if len(common) == 1:
        prob = 1.0 if point > 0 else 0.0
        return PairedComparison(1, float(a.mean()), float(b.mean()), point, point, point, prob, confidence, only_a, only_b)
    samples = _bootstrap_means(diffs, n_boot, np.random.default_rng(seed))
    low, high = _percentile_interval(samples, confidence)
    return PairedComparison(
        n_tasks=len(common),
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        difference=point,
        ci_low=low,
        ci_high=high,
        prob_improvement=float((samples > 0).mean()),
        confidence=confidence,
        only_in_a=only_a,
        only_in_b=only_b,
    )
