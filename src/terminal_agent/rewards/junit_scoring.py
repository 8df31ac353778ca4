"""The verifier's JUnit report read back into per-test outcomes, and the task's weighted score over them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from terminal_agent.errors import GradingError
from terminal_agent.interfaces import TestOutcome
from terminal_agent.tasks.model import Task


def parse_junit(xml_bytes: bytes) -> dict[str, list[tuple[bool, str]]]:
    """Bare test function name -> [(passed, message)] for every reported test case."""
    try:
        root = ET.fromstring(xml_bytes)
    except ET.ParseError as exc:
        raise GradingError(f"the JUnit report does not parse: {exc}") from None
    results: dict[str, list[tuple[bool, str]]] = {}
    for case in root.iter("testcase"):
        name = (case.get("name") or "").split("[", 1)[0]
        if not name:
            continue
        bad = [child for child in case if child.tag in ("failure", "error", "skipped")]
        message = (bad[0].get("message") or bad[0].tag)[:500] if bad else ""
        results.setdefault(name, []).append((not bad, message))
    return results


def score_tests(task: Task, reported: dict[str, list[tuple[bool, str]]]) -> tuple[float, list[TestOutcome]]:
    """Weighted score over every declared test; tests without a weight count with weight 0."""
    outcomes: list[TestOutcome] = []
    for name in task.test_functions:
        weight = float(task.test_weights.get(name, 0.0))
        runs = reported.get(name)
        if not runs:
            outcomes.append(TestOutcome(name, weight, passed=False, reported=False, message="not reported"))
            continue
        passed = all(ok for ok, _ in runs)
        message = next((msg for ok, msg in runs if not ok), "")
        outcomes.append(TestOutcome(name, weight, passed=passed, message=message))
    total = sum(o.weight for o in outcomes)
    score = sum(o.weight for o in outcomes if o.passed) / total if total > 0 else 0.0
    return score, outcomes
