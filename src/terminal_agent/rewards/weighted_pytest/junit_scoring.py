"""The verifier's JUnit report read back into per-test outcomes, and the task's weighted score over them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from terminal_agent.errors import GradingError
from terminal_agent.outcome import TestVerdict
from terminal_agent.rewards.guard_scoring import weighted_score
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


def score_tests(task: Task, reported: dict[str, list[tuple[bool, str]]]) -> tuple[float, list[TestVerdict]]:
    """Weighted score over every declared test; tests without a weight count with weight 0.

    The task's guard tests get an outcome with ``guard=True`` (weight 0); a failed or unreported guard zeroes or
    caps the score (:func:`~terminal_agent.rewards.guard_scoring.weighted_score`; the failed guards are
    :func:`~terminal_agent.rewards.guard_scoring.failed_guard_names` of the outcomes).
    """
    guards = set(task.guards.tests) if task.guards is not None else set()
    outcomes: list[TestVerdict] = []
    for name in task.test_functions:
        is_guard = name in guards
        weight = 0.0 if is_guard else float(task.test_weights.get(name, 0.0))
        runs = reported.get(name)
        if not runs:
            outcomes.append(TestVerdict(name, weight, passed=False, reported=False, message="not reported",
                                        guard=is_guard))
            continue
        passed = all(ok for ok, _ in runs)
        message = next((msg for ok, msg in runs if not ok), "")
        outcomes.append(TestVerdict(name, weight, passed=passed, message=message, guard=is_guard))
    return weighted_score(outcomes, task.guards)
