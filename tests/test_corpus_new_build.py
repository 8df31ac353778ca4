"""The build-repair, packaging and speed-fix corpus modules: structure of every task, and one in a container."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from terminal_agent.tasks.model import GradingMode
from task_builders import corpus_specs

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("build_repair", "python_packaging", "speed_fixes")


def _specs():
    return corpus_specs(*MODULES)


SPECS = _specs()


def test_the_modules_give_enough_tasks_of_each_kind():
    assert len(SPECS) >= 16
    ids = [spec.task_id for spec in SPECS]
    assert len(ids) == len(set(ids)), "task ids repeat"
    assert sum(spec.harbor for spec in SPECS) >= 4
    assert sum(spec.held_out for spec in SPECS) >= 2  # the corpus-wide split: tests/test_splits.py
    assert {spec.difficulty for spec in SPECS if spec.held_out} == {"medium"}  # "hard" relabelled (issue 36)
    assert any(isinstance(content, bytes) for spec in SPECS for content in spec.files.values()), "no binary fixture"


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.task_id)
def test_task_structure(spec):
    task = spec.to_task()
    assert task.difficulty in ("medium", "hard")
    assert len(task.test_weights) >= 3
    weights = sorted(task.test_weights.values())
    assert weights[-1] < sum(weights), "one test holds all the credit"
    assert all(weight > 0 for weight in weights)
    for guard in spec.guards:
        assert guard not in task.test_weights, f"guard {guard} carries weight"
        assert f"def {guard}(" in task.test_source
    for name in task.test_weights:
        assert f"def {name}(" in task.test_source, name
    assert task.solution and len(task.solution.splitlines()) > 3
    assert len(task.files) >= 1
    if spec.harbor:
        assert task.verifier.mode == GradingMode.HARBOR
        script = task.test_support_files["test.sh"]
        assert "pytest-json-ctrf" in script and "/logs/verifier/reward.txt" in script
        for name in task.test_weights:
            assert f'"{name}"' in script
    if spec.held_out:
        assert task.metadata.get("corpus_split") == "held_out"
    compile(task.test_source, f"{spec.task_id}/test_outputs.py", "exec")


def _shingles(spec):
    text = " ".join([spec.instruction, spec.solution, *(v for v in spec.files.values() if isinstance(v, str))])
    words = re.findall(r"[a-z_]+", text.lower())
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def test_held_out_tasks_have_no_twin_among_the_others():
    # Word-trigram Jaccard similarity over prompt, files and solution: a variant of another task would share
    # most of its text (measured: every held-out task is below 0.05 against its closest train task here).
    train = [spec for spec in SPECS if not spec.held_out]
    for spec in (s for s in SPECS if s.held_out):
        mine = _shingles(spec)
        closest = max((len(mine & _shingles(o)) / len(mine | _shingles(o)), o.task_id) for o in train)
        assert closest[0] < 0.2, (spec.task_id, closest)
