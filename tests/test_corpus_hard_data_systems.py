"""The hard data-systems corpus module (issue 36): structure of every task, and one task in a real container."""

from __future__ import annotations

import ast
import re
import sys

import pytest

from task_builders import CORPUS_DIR, corpus_specs

SPECS = corpus_specs("hard_data_systems")


def _shipped_lines(spec) -> tuple[int, int]:
    """(lines of program text the task ships, the least a hard task must ship), by the corpus's own rule."""
    sys.path.insert(0, str(CORPUS_DIR))
    try:
        from _spec import HARD_MIN_CODE_LINES, shipped_code_lines
    finally:
        sys.path.remove(str(CORPUS_DIR))
    return shipped_code_lines(spec.files), HARD_MIN_CODE_LINES


def test_the_module_gives_hard_tasks_of_different_kinds():
    assert len(SPECS) >= 3
    ids = [spec.task_id for spec in SPECS]
    assert len(ids) == len(set(ids)), "task ids repeat"
    assert {spec.difficulty for spec in SPECS} == {"hard"}
    assert all(spec.held_out for spec in SPECS)  # held out together (docs/tasks.md, "What hard means")
    packages = [path.split("/")[0] for spec in SPECS for path in spec.files if path.count("/") == 1
                and path.endswith("/__init__.py") and path.split("/")[0] != "unit_tests"]
    assert len(packages) == len(set(packages)) == len(SPECS), f"each task ships its own program: {packages}"


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_task_structure(spec):
    task = spec.to_task()
    lines, least = _shipped_lines(spec)
    assert lines >= least
    python_files = [path for path in spec.files if path.endswith(".py")]
    assert len(python_files) >= 8, "a codebase of several modules"
    for path in python_files:
        ast.parse(spec.files[path], filename=path)
    weights = task.test_weights
    assert len(weights) >= 5 and all(weight > 0 for weight in weights.values())
    assert max(weights.values()) <= 0.3 * sum(weights.values()), "one test holds too much of the credit"
    functions = set(re.findall(r"^def (test_\w+)\(", task.test_source, flags=re.M))
    assert set(weights) | set(spec.guards) == functions, "every test pays or guards"
    assert spec.guards and not set(weights) & set(spec.guards)
    assert task.guards.on_failure.value == "zero"
    assert any("unit_tests" in name for name in spec.guards), "the shipped unit tests must keep passing"
    # the fix touches several shipped modules: the reference solution replaces at least three of them, each changed
    fixed = [path.removeprefix("fixed/") for path in spec.solution_files]
    assert len(fixed) >= 3 and all(path in spec.files for path in fixed), fixed
    assert all(spec.solution_files[f"fixed/{path}"] != spec.files[path] for path in fixed)
    # every bound is below the reference's 1.0 and the negatives differ from each other
    assert len({negative.script for negative in task.negative_solutions}) == len(task.negative_solutions)
    assert len(task.negative_solutions) >= 2
    assert all(0 <= negative.max_score < 1 for negative in task.negative_solutions)
    assert task.limits.agent_timeout_s >= 3600
    compile(task.test_source, f"{spec.task_id}/test_outputs.py", "exec")


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_instruction_reads_like_a_ticket_not_a_map_of_the_bugs(spec):
    fixed = [path.removeprefix("fixed/") for path in spec.solution_files]
    named = [path for path in fixed if path.rsplit("/", 1)[-1] in spec.instruction]
    assert not named, f"the instruction names the files to change: {named}"
    assert len(spec.instruction.split()) >= 120


@pytest.mark.docker
@pytest.mark.slow
def test_reference_solution_and_no_op_in_a_real_container():
    from terminal_agent.task_quality.validation import validate_tasks

    task = next(spec for spec in SPECS if spec.task_id == "lsm-kv-store-recovery").to_task()
    (validation,) = validate_tasks([task], concurrency=2)
    assert validation.infrastructure_errors == [], validation.infrastructure_errors
    assert validation.oracle_score == 1.0 and validation.noop_score == 0.0, validation
    assert validation.ok, validation.problems
    assert validation.negative_scores.keys() == {negative.name for negative in task.negative_solutions}
