"""A verifier's CTRF report (``/logs/verifier/ctrf.json``, written by pytest-json-ctrf) read into per-test
outcomes, and partial credit from the task's weights over it.

CTRF names a test by its pytest node id without parameters (``test_outputs.py::TestX::test_y``); a weight
may name it whole, without the file part (``TestX::test_y``), or by the bare function (``test_y``). A test
reported several times (parametrized cases, one name) passes only when every report passed; skipped,
pending and other do not pass. A weighted test the report never names has failed (``reported=False``).
Guard test names (``Task.guards``) match the same way; a failed or unreported guard zeroes or caps the score.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from terminal_agent.errors import GradingError
from terminal_agent.outcome import TestVerdict
from terminal_agent.rewards.guard_scoring import apply_guards, weighted_score
from terminal_agent.tasks.model import TestGuards

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


def ctrf_outcomes(tests: list[CtrfTest]) -> list[TestVerdict]:
    """One outcome per reported test name, weight 0 (what was run, without weights)."""
    merged: dict[str, TestVerdict] = {}
    for test in tests:
        name = test.name.split("[", 1)[0]
        passed = test.status == PASSED
        known = merged.get(name)
        if known is None:
            merged[name] = TestVerdict(name, 0.0, passed=passed, message="" if passed else test.message or test.status)
        elif not passed and known.passed:
            merged[name] = replace(known, passed=False, message=test.message or test.status)
    return list(merged.values())


def _runs_by_key(tests: list[CtrfTest]) -> dict[str, list[CtrfTest]]:
    runs: dict[str, list[CtrfTest]] = {}
    for test in tests:
        for key in name_keys(test.name):
            runs.setdefault(key, []).append(test)
    return runs


def _matched_outcome(name: str, weight: float, matched: list[CtrfTest] | None, guard: bool = False) -> TestVerdict:
    if not matched:
        return TestVerdict(name, weight, passed=False, reported=False, message="not reported", guard=guard)
    failing = next((test for test in matched if test.status != PASSED), None)
    return TestVerdict(name, weight, passed=failing is None,
                       message="" if failing is None else failing.message or failing.status, guard=guard)


def ctrf_test_outcomes(weights: dict[str, float], tests: list[CtrfTest],
                       guards: TestGuards | None = None) -> list[TestVerdict]:
    """Outcomes of the weighted names, then of the guards (``guard=True``, weight 0), then of the reported tests
    neither names (weight 0). Weights and guards match CTRF names as :func:`name_keys` says."""
    runs = _runs_by_key(tests)
    guard_names = list(guards.tests) if guards is not None else []
    outcomes: list[TestVerdict] = []
    claimed: set[str] = set()
    named = [(name, float(weight), False) for name, weight in weights.items() if name not in guard_names]
    named += [(name, 0.0, True) for name in guard_names]
    for name, weight, guard in named:
        matched = runs.get(name)
        claimed.update(test.name.split("[", 1)[0] for test in matched or [])
        outcomes.append(_matched_outcome(name, weight, matched, guard))
    outcomes += [outcome for outcome in ctrf_outcomes(tests) if outcome.name not in claimed]
    return outcomes


def score_ctrf(weights: dict[str, float], tests: list[CtrfTest],
               guards: TestGuards | None = None) -> tuple[float, list[TestVerdict]]:
    """``sum(weight * passed) / sum(weight)`` over every weighted name, zeroed or capped when a guard failed or
    was not reported (:func:`~terminal_agent.rewards.guard_scoring.weighted_score`); outcomes as
    :func:`ctrf_test_outcomes` lists them."""
    return weighted_score(ctrf_test_outcomes(weights, tests, guards), guards)


def guard_reward(reward: float, tests: list[CtrfTest], guards: TestGuards) -> tuple[float, list[TestVerdict]]:
    """The reward file's ``reward`` after the guards, judged on the CTRF report (a task without weights), and the
    outcomes of the reported tests (guards marked)."""
    return apply_guards(reward, ctrf_test_outcomes({}, tests, guards), guards)
