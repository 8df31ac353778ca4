"""A verifier's CTRF report (``/logs/verifier/ctrf.json``, written by pytest-json-ctrf) read into per-test
outcomes, and partial credit from the task's weights over it.

CTRF names a test by its pytest node id without parameters (``test_outputs.py::TestX::test_y``); a weight
may name it whole, without the file part (``TestX::test_y``), or by the bare function (``test_y``). A test
reported several times (parametrized cases, one name) passes only when every report passed; skipped,
pending and other do not pass. A weighted test the report never names has failed (``reported=False``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from terminal_agent.errors import GradingError
from terminal_agent.interfaces import TestOutcome

PASSED = "passed"


@dataclass(frozen=True)
class CtrfTest:
    """One entry of a CTRF report."""

    name: str
    status: str
    message: str = ""


def parse_ctrf(data: bytes) -> list[CtrfTest]:
    """The tests of a CTRF report; :class:`GradingError` when it is not one."""
    try:
        report = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GradingError(f"the CTRF report does not parse: {exc}") from None
    tests = report.get("results", {}).get("tests") if isinstance(report, dict) and isinstance(report.get("results"), dict) else None
    if not isinstance(tests, list):
        raise GradingError("the CTRF report has no results.tests list")
    parsed: list[CtrfTest] = []
    for entry in tests:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not isinstance(entry.get("status"), str):
            raise GradingError(f"a CTRF test entry lacks a name or a status: {str(entry)[:200]}")
        message = entry.get("message") or entry.get("raw_status") or ""
        parsed.append(CtrfTest(entry["name"], entry["status"], str(message)[:500]))
    return parsed


def name_keys(name: str) -> list[str]:
    """The names a weight may use for the CTRF test ``name``, longest first."""
    bare = name.split("[", 1)[0]
    parts = bare.split("::")
    keys = [bare, "::".join(parts[1:]) if len(parts) > 1 else "", parts[-1]]
    return [key for index, key in enumerate(keys) if key and key not in keys[:index]]


def ctrf_outcomes(tests: list[CtrfTest]) -> list[TestOutcome]:
    """One outcome per reported test name, weight 0 (what was run, without weights)."""
    merged: dict[str, TestOutcome] = {}
    for test in tests:
        name = test.name.split("[", 1)[0]
        passed = test.status == PASSED
        known = merged.get(name)
        if known is None:
            merged[name] = TestOutcome(name, 0.0, passed=passed, message="" if passed else test.message or test.status)
        elif not passed and known.passed:
            known.passed, known.message = False, test.message or test.status
    return list(merged.values())


def score_ctrf(weights: dict[str, float], tests: list[CtrfTest]) -> tuple[float, list[TestOutcome]]:
    """``sum(weight * passed) / sum(weight)`` over every weighted name; outcomes of the weighted tests first,
    then the reported tests no weight names (weight 0)."""
    runs: dict[str, list[CtrfTest]] = {}
    for test in tests:
        for key in name_keys(test.name):
            runs.setdefault(key, []).append(test)
    outcomes: list[TestOutcome] = []
    claimed: set[str] = set()
    for name, weight in weights.items():
        matched = runs.get(name)
        if not matched:
            outcomes.append(TestOutcome(name, float(weight), passed=False, reported=False, message="not reported"))
            continue
        claimed.update(test.name.split("[", 1)[0] for test in matched)
        failing = next((test for test in matched if test.status != PASSED), None)
        outcomes.append(
            TestOutcome(name, float(weight), passed=failing is None,
                        message="" if failing is None else failing.message or failing.status)
        )
    outcomes += [outcome for outcome in ctrf_outcomes(tests) if outcome.name not in claimed]
    total = sum(weights.values())
    score = sum(o.weight for o in outcomes if o.passed and o.reported) / total if total > 0 else 0.0
    return score, outcomes
