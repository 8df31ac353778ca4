"""The hard language-tools corpus module (dataset/corpus/hard_interpreters.py): structure of every task, and one
task's reference solution and no-op in a real container."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from task_builders import corpus_specs

ROOT = Path(__file__).resolve().parents[1]
TASK_FOLDERS = ROOT / "dataset" / "corpus" / "hard_interpreters_files"
SPECS = corpus_specs("hard_interpreters")
BY_ID = {spec.task_id: spec for spec in SPECS}


def _test_functions(source: str) -> set[str]:
    return {node.name for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_the_module_gives_several_distinct_hard_tasks():
    assert len(SPECS) >= 3
    assert len(BY_ID) == len(SPECS), "task ids repeat"
    # held out together: the Python hard tasks are near-twins of one another (docs/tasks.md, "What hard means")
    assert all(spec.difficulty == "hard" and spec.held_out for spec in SPECS)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_task_structure(spec):
    from _spec import HARD_MIN_CODE_LINES, shipped_code_lines

    task = spec.to_task()  # refuses "hard" below the line floor
    assert shipped_code_lines(spec.files) >= HARD_MIN_CODE_LINES
    functions = _test_functions(task.test_source)
    weights = task.test_weights
    assert len(weights) >= 5
    assert all(weight > 0 for weight in weights.values())
    assert max(weights.values()) <= 0.25 * sum(weights.values()), "one test holds too much of the credit"
    assert set(weights) | set(spec.guards) == functions, "every test pays or guards, and every weight names a test"
    assert len(spec.guards) >= 2 and not set(spec.guards) & set(weights)
    assert task.guards.on_failure.value == "zero"
    # the tests read the fixtures they ship with, and the solution only puts shipped reference files in place
    for name in spec.test_files:
        assert name.split("/")[0].split(".")[0] in task.test_source, f"fixture {name} unused"
    for path in re.findall(r"/solution/(fixed/\S+)", spec.solution):
        assert path in spec.solution_files, path
    assert task.limits.agent_timeout_s >= 3600


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_negative_solutions_are_bounded_and_varied(spec):
    negatives = spec.negative_solutions
    assert len(negatives) >= 2
    assert all(0 <= negative.max_score < 0.6 and negative.why for negative in negatives)
    for negative in negatives:
        for path in re.findall(r"/solution/(fixed/\S+)", negative.script):
            assert path in spec.solution_files, (negative.name, path)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_the_fix_spans_several_modules(spec):
    """The reference solution changes at least three shipped program files, each of which exists in the task."""
    changed = [path.removeprefix("fixed/") for path in spec.solution_files if path.endswith(".py")]
    assert len(changed) >= 3, changed
    for path in changed:
        assert path in spec.files, path
        assert spec.files[path] != spec.solution_files["fixed/" + path], f"{path}: the reference copy is the same"


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_shipped_unit_tests_pass_on_the_shipped_and_the_fixed_program(spec, tmp_path):
    """The codebase's own tests pass before and after the fix (a guard requires it), so they hide the bugs."""
    for variant, overlay in (("shipped", {}), ("fixed", spec.solution_files)):
        root = tmp_path / variant
        for path, text in {**spec.files, **{k.removeprefix("fixed/"): v for k, v in overlay.items()}}.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        unit_dir = next(name for name in ("tests", "unit_tests") if (root / name).is_dir())
        result = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", unit_dir, "-t", "."],
                                cwd=root, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (variant, result.stderr[-3000:])


@pytest.mark.docker
@pytest.mark.slow
def test_quill_reference_solution_and_noop_in_a_container():
    from terminal_agent.task_quality.validation import validate_tasks

    [validation] = validate_tasks([BY_ID["quill-interpreter-bugs"].to_task()], concurrency=2)
    assert validation.infrastructure_errors == []
    assert validation.oracle_score == 1.0 and validation.noop_score == 0.0, validation
    assert validation.ok, validation.problems
    for negative in BY_ID["quill-interpreter-bugs"].negative_solutions:
        assert validation.negative_scores[negative.name] <= negative.max_score
