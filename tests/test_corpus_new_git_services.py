"""The corpus modules with git history and service tasks: their structure, and one task validated in a container."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import pytest

from terminal_agent.tasks.model import GradingMode
from task_builders import corpus_specs

ROOT = Path(__file__).resolve().parents[1]
SPECS = {name: corpus_specs(name) for name in ("git_history", "services")}
ALL = [spec for specs in SPECS.values() for spec in specs]


def _test_names(source: str) -> set[str]:
    return {node.name for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_counts_and_mix():
    assert len(SPECS["git_history"]) >= 7 and len(SPECS["services"]) >= 7
    assert sum(spec.harbor for spec in ALL) >= 4
    held = [spec for spec in ALL if spec.held_out]
    assert len(held) >= 5 and {spec.difficulty for spec in held} == {"medium"}
    assert any(isinstance(content, bytes) for spec in ALL for content in spec.files.values())


def test_ids_are_unique():
    ids = [spec.task_id for spec in ALL]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("spec", ALL, ids=lambda spec: spec.task_id)
def test_task_structure(spec):
    task = spec.to_task()
    assert task.difficulty in {"medium", "hard"}
    declared = _test_names(task.test_source)
    weighted = {name for name, weight in task.test_weights.items() if weight > 0}
    assert len(weighted) >= 3
    weights = sorted(task.test_weights.values())
    assert weights[-1] <= sum(weights) / 2, "one test holds more than half the credit"
    assert weighted <= declared
    for guard in spec.guards:
        assert guard in declared and guard not in task.test_weights, guard
    assert declared == weighted | set(spec.guards), "every test is weighted or a guard"
    assert task.solution and task.solution.startswith("#!/bin/bash\n")
    if spec.harbor:
        assert task.verifier.mode == GradingMode.HARBOR
        script = task.test_support_files["test.sh"]
        assert "--ctrf" in script and all(name in script for name in weighted)
    assert (task.metadata.get("corpus_split") == "held_out") == spec.held_out
    if spec.dev_tools:
        assert "git" in task.dockerfile and "procps" in task.dockerfile


def test_git_repositories_are_built_with_fixed_dates():
    for spec in SPECS["git_history"]:
        assert any("make_repo.py /app/_build/plan.json" in step for step in spec.steps), spec.task_id
        assert "_build/plan.json" in spec.files
        builder = next(step for step in spec.steps if "make_repo.py" in step).split("echo ", 1)[1].split(" ", 1)[0]
        source = base64.b64decode(builder).decode()  # the builder the image runs
        assert "GIT_AUTHOR_DATE" in source and "GIT_COMMITTER_DATE" in source, spec.task_id


def test_service_tests_start_the_service_themselves():
    for spec in SPECS["services"]:
        source = spec.to_task().test_source
        assert "run(" in source or "subprocess.Popen" in source, spec.task_id
        if "launched" in source:
            assert "tracker.stop()" in source
