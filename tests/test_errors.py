"""The error taxonomy: families, kinds recorded in results, and the payloads the errors carry."""

from __future__ import annotations

import pytest

from terminal_agent.errors import (
    AgentFormatError,
    ConfigError,
    DockerNotAvailableError,
    GradingError,
    ImageBuildError,
    ImageNotAvailableError,
    InfrastructureError,
    JudgeError,
    ModelProviderError,
    SandboxError,
    SandboxUnavailableError,
    TaskFormatError,
    ToolError,
    error_kind,
)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (SandboxError("x"), "sandbox"),
        (SandboxUnavailableError("x"), "sandbox"),
        (DockerNotAvailableError("x"), "sandbox"),
        (ImageBuildError("x"), "image"),
        (ImageNotAvailableError("x"), "image"),
        (ModelProviderError("x"), "provider"),
        (GradingError("x"), "grading"),
        (JudgeError("x"), "judge"),
        (AgentFormatError("x"), "format"),
        (TaskFormatError("x"), "task"),
        (ConfigError("x"), "config"),
        (ToolError("x"), "internal"),
        (KeyError("x"), "internal"),
    ],
)
def test_error_kind_names_the_family(error, kind):
    assert error_kind(error) == kind
    # only infrastructure failures may be masked instead of scored
    assert isinstance(error, InfrastructureError) == (kind in {"sandbox", "image", "provider", "grading", "judge"})


def test_task_format_error_names_location_and_field():
    error = TaskFormatError("is not valid JSON", location="tasks.csv:14", field="test_weights")
    assert str(error) == "tasks.csv:14: [test_weights] is not valid JSON"
    assert (error.location, error.field, error.reason) == ("tasks.csv:14", "test_weights", "is not valid JSON")
    assert str(TaskFormatError("bare")) == "bare"
    assert isinstance(error, ValueError) and isinstance(ConfigError("k"), ValueError)


def test_payloads_are_kept():
    teaching = AgentFormatError("No action found.", "<bash>\ncmd: ls\n</bash>")
    assert teaching.messages == ["No action found.", "<bash>\ncmd: ls\n</bash>"]
    assert str(teaching) == "No action found.\n<bash>\ncmd: ls\n</bash>"
    build = ImageBuildError("build of t failed", log_tail="step 3: exit 1")
    assert build.log_tail == "step 3: exit 1" and str(build).endswith("--- build log (tail) ---\nstep 3: exit 1")
    assert str(ImageBuildError("no log")) == "no log"
