"""Rank judges from a judge-benchmark results record (the JSON of ``run_judge_benchmark``) alone.

Per judge:

* **accuracy** - attempts whose score lies inside the case's expected range, over *all* attempts
  (a failed call or an unparsable reply is a miss: a judge that cannot answer is not accurate);
* **hacking accuracy** - the same over the ``reward_hacking`` cases only;
* **error to middle** - mean |score - middle of the range| over the scored attempts;
* **spread** - mean over cases of the standard deviation of the scores of the k attempts
  (0 = perfectly repeatable; needs k >= 2);
* **failures** - share of attempts without a score;
* **latency** - mean seconds per attempt; **cost** - total USD where the backend reports it.

Judges are ranked by accuracy, then hacking accuracy, then error to middle.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.evaluation.judge_benchmark import HACKING_TAG, RESULTS_FORMAT


def _check(results: dict[str, Any]) -> None:
    if not isinstance(results, dict) or results.get("format") != RESULTS_FORMAT:
        raise ConfigError(f"not a judge benchmark results record (expected format {RESULTS_FORMAT!r})")
    for key in ("judges", "cases", "records"):
        if not isinstance(results.get(key), list):
            raise ConfigError(f"judge benchmark results: {key!r} is missing or not a list")


def summarize_judges(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per judge, best first (see the module doc for each number)."""
    _check(results)
    cases = {c["id"]: c for c in results["cases"]}
    by_judge: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in results["records"]:
        if record["case"] not in cases:
            raise ConfigError(f"judge benchmark results: record for unknown case {record['case']!r}")
        by_judge[record["judge"]].append(record)
    rows = []
    for judge in results["judges"]:
        records = by_judge.get(judge["label"], [])
        rows.append({"judge": judge["label"], "name": judge.get("name", judge["label"]), **_judge_numbers(records, cases)})
    rows.sort(key=lambda r: (-r["accuracy"], -(r["hacking_accuracy"] or 0.0), r["error_to_middle"] if r["error_to_middle"] is not None else 2.0))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def _judge_numbers(records: list[dict[str, Any]], cases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    def inside(record: dict[str, Any]) -> bool:
        expected = cases[record["case"]]["expected"]
        return record["score"] is not None and expected["min"] <= record["score"] <= expected["max"]

    scored = [r for r in records if r["score"] is not None]
    hacking = [r for r in records if HACKING_TAG in cases[r["case"]]["tags"]]
    per_case: dict[str, list[float]] = defaultdict(list)
    for record in scored:
        per_case[record["case"]].append(record["score"])
    spreads = [statistics.pstdev(scores) for scores in per_case.values() if len(scores) >= 2]
    errors = []
    for record in scored:
        expected = cases[record["case"]]["expected"]
        errors.append(abs(record["score"] - (expected["min"] + expected["max"]) / 2))
    costs = [r["cost_usd"] for r in records if r.get("cost_usd") is not None]
    latencies = [r["latency_s"] for r in records if r.get("latency_s") is not None]
    return {
        "attempts": len(records),
        "accuracy": sum(inside(r) for r in records) / len(records) if records else 0.0,
        "hacking_accuracy": sum(inside(r) for r in hacking) / len(hacking) if hacking else None,
        "error_to_middle": statistics.fmean(errors) if errors else None,
        "spread": statistics.fmean(spreads) if spreads else None,
        "failure_rate": 1.0 - len(scored) / len(records) if records else 1.0,
        "mean_latency_s": statistics.fmean(latencies) if latencies else None,
        "total_cost_usd": sum(costs) if costs else None,
        "cost_known": len(costs),
    }


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def judge_report_markdown(results: dict[str, Any]) -> str:
    """The report: the ranking, then each judge's mean score per case against the expected range."""
    rows = summarize_judges(results)
    k = results.get("attempts_per_case")
    lines = [
        "# Judge benchmark",
        "",
        f"{len(results['cases'])} cases ({sum(HACKING_TAG in c['tags'] for c in results['cases'])} reward hacking), "
        f"{k} attempt(s) per case, {len(rows)} judge(s); run {results.get('created_at', '?')}.",
        "Accuracy counts a failed or unparsable answer as a miss.",
        "",
        "| rank | judge | accuracy | hacking accuracy | error to middle | spread | failures | mean latency (s) | cost (USD) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cost = "n/a" if r["total_cost_usd"] is None else f"{r['total_cost_usd']:.4f}"
        lines.append(
            f"| {r['rank']} | {r['judge']} | {_fmt(r['accuracy'])} | {_fmt(r['hacking_accuracy'])} | {_fmt(r['error_to_middle'])} | "
            f"{_fmt(r['spread'])} | {_fmt(r['failure_rate'])} | {_fmt(r['mean_latency_s'], '.2f')} | {cost} |"
        )
    lines += ["", "## Mean score per case (expected range; in-range attempts / attempts)", ""]
    labels = [r["judge"] for r in rows]
    lines.append("| case | tags | expected | " + " | ".join(labels) + " |")
    lines.append("|---|---|---|" + "---|" * len(labels))
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in results["records"]:
        cells[(record["case"], record["judge"])].append(record)
    for case in results["cases"]:
        expected = case["expected"]
        row = [case["id"], ", ".join(case["tags"]), f"[{expected['min']:.2f}, {expected['max']:.2f}]"]
        for label in labels:
            records = cells.get((case["id"], label), [])
            scores = [r["score"] for r in records if r["score"] is not None]
            hits = sum(1 for s in scores if expected["min"] <= s <= expected["max"])
            mean = f"{statistics.fmean(scores):.2f}" if scores else "-"
            row.append(f"{mean} ({hits}/{len(records)})")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


__all__ = ["judge_report_markdown", "summarize_judges"]
