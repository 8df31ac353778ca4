"""The Task model's validation: weights, ids, instruction, Dockerfile, file paths."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from terminal_agent.tasks.model import Task, TaskLimits, find_test_functions

TESTS = "def test_a():\n    assert True\n\n\nclass TestGroup:\n    def test_b(self):\n        assert True\n"


def make(**overrides) -> Task:
    fields = {
        "task_id": "demo-1",
        "instruction": "Do it.",
        "dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n",
        "test_source": TESTS,
        "test_weights": {"test_a": 1.0, "test_b": 2.0},
    }
    fields.update(overrides)
    return Task(**fields)


def test_a_valid_task_keeps_its_values():
    task = make(limits=TaskLimits(cpus=0.5, memory_mb=256))
    assert task.test_functions == ["test_a", "test_b"]
    assert task.limits.cpus == 0.5 and task.limits.memory_mb == 256
    assert task.solution is None and task.metadata == {}


def test_find_test_functions_sees_module_and_class_tests_in_order():
    source = "def helper():\n    pass\n\ndef test_z():\n    pass\n\nclass TestX:\n    def test_y(self):\n        pass\n"
    assert find_test_functions(source) == ["test_z", "test_y"]


@pytest.mark.parametrize(
    "weights, message",
    [
        ({"test_a": 1.0, "test_missing": 1.0}, "do not exist: test_missing"),
        ({"test_a": -1.0, "test_b": 2.0}, "negative"),
        ({"test_a": 0.0, "test_b": 0.0}, "all zero"),
        ({}, "empty"),
    ],
)
def test_bad_weights_are_rejected(weights, message):
    with pytest.raises(ValidationError, match=message):
        make(test_weights=weights)


def test_a_zero_weight_beside_a_positive_one_is_allowed():
    assert make(test_weights={"test_a": 0.0, "test_b": 1.0}).test_weights["test_a"] == 0.0


@pytest.mark.parametrize("task_id", ["../up", "a/b", "", ".hidden", "-dash", "x" * 129, "sp ace", "ünï"])
def test_unsafe_ids_are_rejected(task_id):
    with pytest.raises(ValidationError, match="safe directory name"):
        make(task_id=task_id)


@pytest.mark.parametrize("task_id", ["a", "fix-stats-script", "v1.2_final", "X" * 128])
def test_safe_ids_are_accepted(task_id):
    assert make(task_id=task_id).task_id == task_id


def test_blank_instruction_is_rejected():
    with pytest.raises(ValidationError, match="empty"):
        make(instruction=" \n\t")


def test_dockerfile_needs_a_from_line():
    with pytest.raises(ValidationError, match="FROM"):
        make(dockerfile="RUN echo hi\n")


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a/../../x", " "])
def test_file_paths_must_stay_inside_the_task(path):
    with pytest.raises(ValidationError, match="relative"):
        make(files={path: "x"})
    with pytest.raises(ValidationError, match="relative"):
        make(test_support_files={path: "x"})


def test_test_source_that_does_not_parse_is_rejected():
    with pytest.raises(ValidationError, match="does not parse"):
        make(test_source="def test_a(:\n")


def test_unknown_fields_are_rejected():
    with pytest.raises(ValidationError):
        make(surprise=1)


def test_content_hashes_change_with_what_they_cover():
    base = make().content_hashes()
    assert make(instruction="Other.").content_hashes()["instruction"] != base["instruction"]
    assert make(files={"a": "b"}).content_hashes()["environment"] != base["environment"]
    assert make(test_weights={"test_a": 1.0, "test_b": 3.0}).content_hashes()["weights"] != base["weights"]
    assert make(title="t").content_hashes() == base


@pytest.mark.parametrize("weight", [float("nan"), float("inf")])
def test_weights_must_be_finite(weight):
    # a NaN weight would make every score (and the reward handed to the trainer) NaN
    with pytest.raises(ValidationError, match="finite"):
        make(test_weights={"test_a": weight, "test_b": 1.0})


@pytest.mark.parametrize(
    "limits", [{"cpus": float("nan")}, {"cpus": 0}, {"memory_mb": 0}, {"pids": -1}, {"agent_timeout_s": -5}, {"test_timeout_s": float("inf")}]
)
def test_limits_must_be_positive_and_finite(limits):
    with pytest.raises(ValidationError) as info:
        TaskLimits(**limits)
    assert info.value.errors()[0]["loc"] == (next(iter(limits)),)


def test_content_hashes_of_text_only_tasks_keep_the_formula_the_shipped_manifests_pin():
    import hashlib
    import json

    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    task = make(files={"b/c.py": "print()\n", "a.txt": "x\r\n"}, test_support_files={"f.json": "{}"})
    hashes = task.content_hashes()
    assert hashes["environment"] == digest(task.dockerfile + "\0" + json.dumps(task.files, sort_keys=True))
    assert hashes["tests"] == digest(task.test_source + "\0" + json.dumps(task.test_support_files, sort_keys=True))
    assert hashes["weights"] == digest(json.dumps(task.test_weights, sort_keys=True))


def test_binary_files_are_task_files_and_count_in_the_hashes():
    binary = make(files={"logo.png": b"\x89PNG\r\n\x1a\n\x00"}, solution_files={"x.bin": b"\x00"})
    assert binary.files["logo.png"].startswith(b"\x89PNG")
    assert binary.content_hashes()["environment"] != make(files={"logo.png": "\x89PNG\r\n\x1a\n\x00"}).content_hashes()[
        "environment"]
