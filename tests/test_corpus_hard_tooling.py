"""The hard systems-tooling corpus tasks (dataset/corpus/hard_tooling.py): structure of every task, that each
planted bug really is in the shipped code and undone by the reference fix, and one task in a real container."""

from __future__ import annotations

import json

import pytest

from task_builders import corpus_specs

HARD_MIN_LINES = 1000


def _specs():
    return corpus_specs("hard_tooling")


SPECS = _specs()


def test_the_module_gives_distinct_hard_tasks():
    assert len(SPECS) >= 2
    ids = [spec.task_id for spec in SPECS]
    assert len(ids) == len(set(ids))
    assert all(spec.difficulty == "hard" and not spec.held_out for spec in SPECS)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_task_structure(spec):
    task = spec.to_task()  # refuses "hard" below 1,000 shipped code lines
    code = sum(len(text.splitlines()) for path, text in spec.files.items() if path.endswith((".py", ".c", ".h", ".sh")))
    assert code >= HARD_MIN_LINES
    assert len({path.rsplit("/", 1)[0] for path in spec.files if path.endswith(".py")}) >= 2  # package + tests
    assert len(task.test_weights) >= 5
    weights = sorted(task.test_weights.values())
    assert all(weight > 0 for weight in weights) and weights[-1] < 0.25 * sum(weights)
    assert len(spec.guards) >= 2
    for guard in spec.guards:
        assert guard not in task.test_weights and f"def {guard}(" in task.test_source
    for name in task.test_weights:
        assert f"def {name}(" in task.test_source, name
    assert len(task.negative_solutions) >= 2
    assert all(negative.max_score < 0.8 for negative in task.negative_solutions)
    assert task.limits.agent_timeout_s >= 1800
    compile(task.test_source, f"{spec.task_id}/test_outputs.py", "exec")


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_the_planted_bugs_span_several_files_and_the_fix_undoes_them(spec):
    fixes = json.loads(spec.solution_files["fixes.json"])
    assert len({path for path, _, _ in fixes.values()}) >= 4, "the fix must touch several files"
    files = dict(spec.files)
    for name, (path, planted, correct) in sorted(fixes.items()):  # the order the reference solution uses
        assert files[path].count(planted) == 1, name
        files[path] = files[path].replace(planted, correct)
    changed = {path for path in files if files[path] != spec.files[path]}
    assert changed == {path for path, _, _ in fixes.values()}


@pytest.mark.docker
@pytest.mark.slow
def test_reference_solution_and_no_op_in_a_container():
    from terminal_agent.task_quality.validation import validate_tasks

    spec = next(spec for spec in SPECS if spec.task_id == "hard-bake-incremental-order-only")
    (validation,) = validate_tasks([spec.to_task()], concurrency=1)
    assert validation.ok, (validation.problems, validation.infrastructure_errors)
    assert validation.oracle_score == 1.0
    assert validation.noop_score == 0.0
