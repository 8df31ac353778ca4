"""Harbor task directories: round trip, native task.toml keys, foreign tasks, wrongly typed values."""

from __future__ import annotations

import tomllib

import pytest
from task_builders import DATA, TASKS, rich_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.harbor import dump_toml, read_harbor_task, write_harbor_task
from terminal_agent.tasks.model import TaskLimits


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.task_id)
def test_harbor_round_trip_is_lossless(tmp_path, task):
    task_dir = write_harbor_task(task, tmp_path)
    assert read_harbor_task(task_dir) == task


def test_harbor_layout_and_native_keys(tmp_path):
    task_dir = write_harbor_task(rich_task(limits=TaskLimits(cpus=2.0, memory_mb=640)), tmp_path)
    data = tomllib.loads((task_dir / "task.toml").read_text())
    assert data["agent"]["timeout_sec"] == 600.0 and data["verifier"]["timeout_sec"] == 120.0
    assert data["environment"] == {"cpus": 2, "memory_mb": 640, "allow_internet": False}
    assert data["metadata"]["difficulty"] == "hard" and data["metadata"]["tags"] == rich_task().tags
    assert data["metadata"]["terminal_agent"]["test_weights"]["test_second"] == 2.75
    assert (task_dir / "instruction.md").read_text(encoding="utf-8") == rich_task().instruction
    assert (task_dir / "environment" / "Dockerfile").read_text() == rich_task().dockerfile
    assert (task_dir / "solution" / "solve.sh").is_file()
    test_sh = (task_dir / "tests" / "test.sh").read_text()
    assert "/logs/verifier/reward.txt" in test_sh and '"test_second": 2.75' in test_sh
    # a fractional CPU quota has no native Harbor slot (Harbor wants an integer): kept in our table only
    fractional = tomllib.loads((write_harbor_task(rich_task(), tmp_path / "f") / "task.toml").read_text())
    assert "cpus" not in fractional["environment"]
    assert fractional["metadata"]["terminal_agent"]["limits"]["cpus"] == 1.5


def test_reading_a_harbor_task_written_elsewhere(tmp_path):
    task = read_harbor_task(DATA / "harbor_tasks" / "sum-numbers")
    assert task.instruction == "Write the sum of the numbers in /app/numbers.txt to /app/sum.txt.\n"
    assert task.test_weights == {"test_sum_file": 1.0}
    assert task.limits.agent_timeout_s == 420.0 and task.limits.test_timeout_s == 90.0
    assert task.limits.cpus == 2 and task.limits.memory_mb == 2048 and task.limits.network is False
    assert task.files == {"numbers.txt": "1\n2\n3\n"}
    assert task.test_support_files == {"expected.txt": "6\n"}
    assert task.metadata["expert_time_estimate_min"] == 3.5
    assert task.metadata["harbor"]["environment"] == {"build_timeout_sec": 600.0, "storage_mb": 10240}
    assert task.metadata["harbor_test_file"] == "test_state.py"
    rewritten = write_harbor_task(task, tmp_path)
    assert (rewritten / "tests" / "test_state.py").is_file()
    assert "test_state.py" in (rewritten / "tests" / "test.sh").read_text()
    assert read_harbor_task(rewritten) == task


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda data: data.update(verifier="fast"), "verifier"),
        (lambda data: data.update(environment=[1]), "environment"),
        (lambda data: data["metadata"]["terminal_agent"].update(limits="none"), "terminal_agent.limits"),
        (lambda data: data["metadata"]["terminal_agent"].update(metadata_json=3), "terminal_agent.metadata_json"),
    ],
)
def test_wrongly_typed_task_toml_values_are_format_errors(tmp_path, edit, field):
    task_dir = write_harbor_task(rich_task(), tmp_path)
    data = tomllib.loads((task_dir / "task.toml").read_text())
    edit(data)
    (task_dir / "task.toml").write_text(dump_toml(data))
    with pytest.raises(TaskFormatError) as info:
        read_harbor_task(task_dir)
    assert info.value.field == field and info.value.location == str(task_dir)
