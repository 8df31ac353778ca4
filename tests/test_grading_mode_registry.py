"""Grading modes are open like sandbox backends: a registered mode is a valid ``verifier.mode``, reached by the
mode dispatch and kept by every task format's round trip; an unknown mode is refused with the registered ones."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from task_builders import plain_task
from terminal_agent.outcome import Grade
from terminal_agent.rewards.grading_modes import GraderSettings, ModeGraders
from terminal_agent.tasks.csv.rows import task_from_csv_values, task_to_csv_values
from terminal_agent.tasks.grading_mode_registry import GRADING_MODES
from terminal_agent.tasks.model import GradingMode, Task, VerifierSpec
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
