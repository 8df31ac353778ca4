"""Grading modes are open like sandbox backends: a registered mode is a valid ``verifier.mode``, reached by the
mode dispatch and kept by every task format's round trip; an unknown mode is refused with the registered ones."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from task_builders import plain_task
from terminal_agent.errors import TaskFormatError
from terminal_agent.outcome import Grade
from terminal_agent.rewards.grading_modes import GraderSettings, ModeGraders
from terminal_agent.tasks.csv.rows import task_from_csv_values, task_to_csv_values
from terminal_agent.tasks.grading_mode_registry import GRADING_MODES
from terminal_agent.tasks.model import GradingMode, Task, VerifierSpec, task_from_fields
from terminal_agent.tasks.parquet.rows import task_from_flat_dict, task_to_flat_dict

PLUGIN = "always-half"


class HalfGrader:
    """A plugin mode's grader: every episode scores 0.5 (records what it was asked to grade)."""

    def __init__(self, settings: GraderSettings):
        self.settings = settings
        self.graded: list[str] = []

    def grade(self, sandbox, task: Task, *, workdir: str | None = None) -> Grade:
        self.graded.append(task.task_id)
        return Grade(score=0.5)


@pytest.fixture
def plugin_mode() -> Iterator[str]:
    GRADING_MODES.register(PLUGIN)(HalfGrader)
    yield PLUGIN
    GRADING_MODES.unregister(PLUGIN)


def test_the_built_in_modes_are_registered_by_their_serialized_names():
    assert {"weighted_pytest", "harbor"} <= set(GRADING_MODES.names())
    assert VerifierSpec().mode == GradingMode.WEIGHTED_PYTEST == "weighted_pytest"
    assert VerifierSpec.model_validate({"mode": "harbor"}).mode is GradingMode.HARBOR
    assert VerifierSpec(mode="harbor").model_dump(mode="json")["mode"] == "harbor"


def test_an_unknown_mode_is_refused_naming_the_registered_ones():
    with pytest.raises(ValidationError, match=r"unknown grading mode 'pytest-ish'; valid: .*harbor.*weighted_pytest"):
        VerifierSpec(mode="pytest-ish")


def test_a_registered_mode_is_valid_dispatched_and_round_trips(plugin_mode: str):
    task = plain_task().model_copy(update={"verifier": VerifierSpec(mode=plugin_mode)})
    graders = ModeGraders()
    result = graders.grade(object(), task)
    assert result.score == 0.5
    grader = graders.for_task(task)
    assert isinstance(grader, HalfGrader) and grader.graded == [task.task_id]
    assert graders.for_task(plain_task()) is not grader  # the other tasks keep their own mode's grader
    assert task_from_csv_values(task_to_csv_values(task)).verifier.mode == plugin_mode
    assert task_from_flat_dict(task_to_flat_dict(task)).verifier.mode == plugin_mode


def test_a_mode_gone_from_the_registry_is_unknown_again(plugin_mode: str):
    GRADING_MODES.unregister(plugin_mode)
    try:
        with pytest.raises(ValidationError, match=f"unknown grading mode '{plugin_mode}'"):
            VerifierSpec(mode=plugin_mode)
    finally:
        GRADING_MODES.register(plugin_mode)(HalfGrader)


class AnswerFileRules:
    """A plugin mode's task-field rules: the task must ship ``answer.txt`` beside its tests; no test is unweighted."""

    def __init__(self) -> None:
        self.checked: list[str] = []

    def check(self, task: Task) -> None:
        self.checked.append(task.task_id)
        if "answer.txt" not in task.test_support_files:
            raise ValueError("test_support_files: a task graded by answer file needs answer.txt")

    def unweighted_tests(self, task: Task) -> list[str]:
        return []


def _task_fields(mode: str, **fields) -> dict:
    return {"task_id": "by-answer", "instruction": "Do it.", "dockerfile": "FROM ubuntu:24.04\n", "test_source": "",
            "verifier": {"mode": mode}, **fields}


def test_a_mode_checks_its_own_task_fields_through_its_hook():
    rules = AnswerFileRules()
    GRADING_MODES.register("answer-file", task_fields=rules)(HalfGrader)
    try:
        with pytest.raises(TaskFormatError, match="a task graded by answer file needs answer.txt") as caught:
            task_from_fields(_task_fields("answer-file"), location="tasks.csv row 2")
        assert "tasks.csv row 2" in str(caught.value)
        task = task_from_fields(_task_fields("answer-file", test_support_files={"answer.txt": "42\n"}))
        assert rules.checked == ["by-answer", "by-answer"]  # no weighted-pytest rule was asked of it (no tests)
        assert task.unweighted_tests == []
        with pytest.raises(ValidationError, match="test_weights are negative for: t"):  # what every task must have
            Task.model_validate(_task_fields("answer-file", test_weights={"t": -1.0}))
    finally:
        GRADING_MODES.unregister("answer-file")


def test_a_mode_without_task_field_rules_asks_only_what_every_task_must_have(plugin_mode: str):
    task = Task.model_validate(_task_fields(plugin_mode))  # no tests, no weights: its grader decides
    assert task.unweighted_tests == []


def test_the_built_in_modes_keep_their_task_field_errors():
    with pytest.raises(ValidationError, match=r"test_weights is empty"):
        Task.model_validate(_task_fields("weighted_pytest", test_source="def test_a():\n    pass\n"))
    with pytest.raises(ValidationError, match=r"harbor mode needs tests/test.sh \(test_support_files\['test.sh'\]\)"):
        Task.model_validate(_task_fields("harbor"))
    weighted = Task.model_validate(_task_fields("weighted_pytest", test_source="def test_a():\n    pass\n\n"
                                                "def test_b():\n    pass\n", test_weights={"test_a": 1.0}))
    assert weighted.unweighted_tests == ["test_b"]


def test_reading_a_task_imports_no_grader():
    """A mode's task-field rules live in its room but import nothing of its grader (nor the judge)."""
    code = ("import sys; from terminal_agent.tasks.model import Task; "
            "Task(task_id='t', instruction='i', dockerfile='FROM x\\n', test_source='def test_a():\\n    pass\\n', "
            "test_weights={'test_a': 1.0}); "
            "Task(task_id='h', instruction='i', dockerfile='FROM x\\n', test_source='', "
            "test_support_files={'test.sh': 'exit 0'}, verifier={'mode': 'harbor'}); "
            "print(sorted(m for m in sys.modules if m.startswith('terminal_agent.rewards')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(sorted(["terminal_agent.rewards", "terminal_agent.rewards.harbor",
                                      "terminal_agent.rewards.harbor.task_fields", "terminal_agent.rewards.weighted_pytest",
                                      "terminal_agent.rewards.weighted_pytest.task_fields"]))
