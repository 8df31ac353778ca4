"""Numerics of terminal_agent.evaluation.stats against plain reference implementations, across seeds."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from terminal_agent.evaluation.report import pass_at_k_values, run_report_markdown, summarize
from terminal_agent.evaluation.stats import bootstrap_mean_ci, mean_pass_at_k, paired_bootstrap, pass_at_k
from terminal_agent.evaluation.results import RunInfo, RunResults, TrialError, TrialResult


# --- plain references --------------------------------------------------------------------------
def reference_pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that a random k-subset of n attempts (c passing) holds a pass, by enumeration."""
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(1 for s in subsets if any(outcomes[i] for i in s)) / len(subsets)


def reference_quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default 'linear' method)."""
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def reference_bootstrap(values: list[float], n_boot: int, seed: int, confidence: float) -> tuple[float, float, list[float]]:
    """One resample at a time, one draw at a time, with plain Python sums."""
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(n_boot):
        draws = [values[int(rng.integers(0, len(values)))] for _ in range(len(values))]
        means.append(sum(draws) / len(draws))
    ordered = sorted(means)
    alpha = (1 - confidence) / 2
    return reference_quantile(ordered, alpha), reference_quantile(ordered, 1 - alpha), means


def random_per_task(rng: random.Random, n_tasks: int, attempts: int) -> dict[str, list[float]]:
    return {f"t{i}": [rng.choice([0.0, 0.25, 0.5, 1.0]) for _ in range(attempts)] for i in range(n_tasks)}


# --- pass@k --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_pass_at_k_matches_enumeration(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(reference_pass_at_k(n, c, k), abs=1e-12)


def test_pass_at_k_matches_binomial_formula_for_large_n():
    for n, c, k in [(200, 3, 10), (1000, 17, 100), (64, 0, 8), (64, 64, 8), (50, 49, 2)]:
        expected = 1 - math.comb(n - c, k) / math.comb(n, k)
        assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_pass_at_k_rejects_impossible_inputs():
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


def test_mean_pass_at_k_skips_tasks_with_too_few_attempts():
    counts = {"a": (4, 1), "b": (4, 0), "c": (1, 1)}
    assert mean_pass_at_k(counts, 2) == pytest.approx((pass_at_k(4, 1, 2) + 0.0) / 2)
    assert mean_pass_at_k(counts, 1) == pytest.approx((0.25 + 0.0 + 1.0) / 3)
    assert math.isnan(mean_pass_at_k({}, 1))


def test_pass_at_k_values():
    assert pass_at_k_values(1) == [1]
    assert pass_at_k_values(8) == [1, 2, 4, 8]
    assert pass_at_k_values(5) == [1, 2, 4, 5]


# --- bootstrap ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_bootstrap_ci_matches_plain_loop(seed):
    rng = random.Random(seed)
    per_task = random_per_task(rng, n_tasks=rng.randint(2, 12), attempts=rng.randint(1, 4))
    estimate = bootstrap_mean_ci(per_task, n_boot=300, seed=seed, confidence=0.9)
    task_means = [sum(per_task[t]) / len(per_task[t]) for t in sorted(per_task)]
    low, high, _ = reference_bootstrap(task_means, 300, seed, 0.9)
    assert estimate.value == pytest.approx(sum(task_means) / len(task_means), abs=1e-12)
    assert estimate.ci_low == pytest.approx(low, abs=1e-12)
    assert estimate.ci_high == pytest.approx(high, abs=1e-12)
    assert estimate.ci_low <= estimate.value <= estimate.ci_high
    assert estimate.n == len(per_task)


def test_bootstrap_ci_edge_cases():
    assert math.isnan(bootstrap_mean_ci({}).value)
    one = bootstrap_mean_ci({"a": [0.5, 1.0]})
    assert (one.value, one.ci_low, one.ci_high, one.n) == (0.75, 0.75, 0.75, 1)
    constant = bootstrap_mean_ci({"a": [1.0], "b": [1.0], "c": [1.0]})
    assert constant.ci_low == constant.ci_high == 1.0
    assert bootstrap_mean_ci({"a": [], "b": [0.0]}).n == 1  # tasks without values are ignored
    with pytest.raises(ValueError):
        bootstrap_mean_ci({"a": [1.0]}, confidence=1.5)


def test_bootstrap_ci_narrows_with_more_tasks():
    rng = random.Random(5)
    small = bootstrap_mean_ci({f"t{i}": [float(rng.random() < 0.5)] for i in range(10)}, seed=1)
    large = bootstrap_mean_ci({f"t{i}": [float(rng.random() < 0.5)] for i in range(400)}, seed=1)
    assert (large.ci_high - large.ci_low) < (small.ci_high - small.ci_low) / 3


# --- paired comparison ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 3, 42])
def test_paired_bootstrap_matches_plain_loop(seed):
    rng = random.Random(seed)
    a = random_per_task(rng, n_tasks=rng.randint(3, 10), attempts=2)
    b = {task: [min(1.0, v + rng.choice([0.0, 0.25])) for v in values] for task, values in a.items()}
    b["only_b"] = [1.0]
    result = paired_bootstrap(a, b, n_boot=250, seed=seed)
    common = sorted(a)
    diffs = [sum(b[t]) / len(b[t]) - sum(a[t]) / len(a[t]) for t in common]
    low, high, means = reference_bootstrap(diffs, 250, seed, 0.95)
    assert result.n_tasks == len(common)
    assert result.difference == pytest.approx(sum(diffs) / len(diffs), abs=1e-12)
    assert result.ci_low == pytest.approx(low, abs=1e-12)
    assert result.ci_high == pytest.approx(high, abs=1e-12)
    assert result.prob_improvement == pytest.approx(sum(1 for m in means if m > 0) / len(means))
    assert result.only_in_b == ("only_b",) and result.only_in_a == ()


def test_paired_bootstrap_detects_a_clear_improvement_and_no_change():
    a = {f"t{i}": [0.0, 0.0] for i in range(30)}
    better = {f"t{i}": [1.0, 1.0 if i % 3 else 0.0] for i in range(30)}
    improved = paired_bootstrap(a, better)
    assert improved.ci_low > 0 and improved.prob_improvement == 1.0
    same = paired_bootstrap(a, a)
    assert same.difference == 0.0 and same.prob_improvement == 0.0
    assert paired_bootstrap({"x": [1.0]}, {"y": [1.0]}).n_tasks == 0


# --- run summary ---------------------------------------------------------------------------------------
def test_summary_excludes_errors_from_pass_rate():
    trials = [
        TrialResult(task_id="a", attempt=0, status="scored", reward=1.0, turns=2),
        TrialResult(task_id="a", attempt=1, status="error", error=TrialError(kind="sandbox", message="container died")),
        TrialResult(task_id="b", attempt=0, status="scored", reward=0.5, turns=4),
        TrialResult(task_id="b", attempt=1, status="scored", reward=0.0, turns=1),
    ]
    results = RunResults(run=RunInfo(run_id="r", model="m", attempts=2, wall_s=60.0), trials=trials)
    summary = summarize(results, n_boot=200)
    assert summary["n_errors"] == 1 and summary["errors_by_kind"] == {"sandbox": 1}
    # task a: 1 scored trial, passed; task b: 0 of 2 passed -> per-task mean of passes = (1 + 0) / 2
    assert summary["pass_rate"]["value"] == pytest.approx(0.5)
    assert summary["mean_reward"]["value"] == pytest.approx((1.0 + 0.25) / 2)
    assert summary["pass_at_k"]["1"] == pytest.approx(0.5)
    assert summary["episodes_per_minute"] == pytest.approx(4.0)
    markdown = run_report_markdown(results, summary)
    assert "sandbox" in markdown and "| a | 2 | 1 |" in markdown


def test_reading_a_bad_results_file_names_the_file_and_the_problem(tmp_path):
    from terminal_agent.errors import ConfigError

    path = tmp_path / "results.json"
    for content, expected in [
        ("[1, 2]", "JSON list"),
        ('{"schema_version": 1, "run": {"run_id": "r"}}', "run.model"),
        ('{"schema_version": 1, "run": {"run_id": "r", "model": "m"}, "trials": [{"task_id": "a"}]}', "trials.0.attempt"),
        ("not json", "is not JSON"),
    ]:
        path.write_text(content)
        with pytest.raises(ConfigError, match=expected) as caught:
            RunResults.read(path)
        assert str(path) in str(caught.value)
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(ConfigError, match="is not JSON"):
        RunResults.read(path)
    good = RunResults(run=RunInfo(run_id="r", model="m"), trials=[TrialResult(task_id="a", attempt=0, status="scored", reward=1.0)])
    good.write(path)
    assert RunResults.read(tmp_path).trials == good.trials
