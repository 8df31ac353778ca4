"""`terminal-agent sandbox shell` driven with piped input against a real task image."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from terminal_agent.tasks.csv.format import write_tasks_csv
from terminal_agent.tasks.model import Task

pytestmark = pytest.mark.docker


def _task() -> Task:
    return Task(
        task_id="sandbox-shell-cli",
        instruction="Poke around [/app] and arr[0].",  # brackets rich must not read as markup
        dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
        test_source="def test_nothing():\n    assert True\n",
        test_weights={"test_nothing": 1.0},
    )


def test_shell_runs_typed_commands_in_the_task_sandbox(base_image, tmp_path):
    from terminal_agent.cli import app

    csv_path = write_tasks_csv([_task()], tmp_path / "tasks.csv")
    result = CliRunner().invoke(
        app,
        ["sandbox", "shell", "sandbox-shell-cli", "--tasks", str(csv_path), "--with-tests"],
        input="pwd\ncd /tmp\npwd\nls /tests\nexit 3\nfalse\nexit\n",
    )
    assert result.exit_code == 0, result.output
    assert "/app\n" in result.output and "/tmp\n" in result.output
    assert "test_outputs.py" in result.output
    assert "Poke around [/app] and arr[0]." in result.output
    assert "exit 1" in result.output  # a failing command's status is shown


def test_unknown_task_id_exits_1(tmp_path):
    from terminal_agent.cli import app

    csv_path = write_tasks_csv([_task()], tmp_path / "tasks.csv")
    result = CliRunner().invoke(app, ["sandbox", "shell", "nope", "--tasks", str(csv_path)])
    assert result.exit_code == 1


def test_an_unknown_backend_exits_2_naming_it(tmp_path):
    from terminal_agent.cli import app

    csv_path = write_tasks_csv([_task()], tmp_path / "tasks.csv")
    result = CliRunner().invoke(app, ["sandbox", "shell", "sandbox-shell-cli", "--tasks", str(csv_path),
                                      "--backend", "nosuch"], env={"COLUMNS": "300"})
    assert result.exit_code == 2
    assert "nosuch" in result.output
