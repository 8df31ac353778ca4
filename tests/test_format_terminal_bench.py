"""terminal-bench v1 task directories: round trip, native task.yaml keys, foreign and broken directories."""

from __future__ import annotations

import os

import pytest
import yaml
from task_builders import BINARY_FILES, DATA, RICH_TESTS, TASKS, full_task, harbor_mode_task, rich_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.task_id)
def test_terminal_bench_round_trip_is_lossless(tmp_path, task):
    task_dir = write_tb_task(task, tmp_path)
    assert task_dir == tmp_path / task.task_id
    assert read_tb_task(task_dir) == task


def test_terminal_bench_layout_and_native_keys(tmp_path):
    task_dir = write_tb_task(rich_task(), tmp_path)
    data = yaml.safe_load((task_dir / "task.yaml").read_text())
    assert data["instruction"] == rich_task().instruction
    assert data["max_agent_timeout_sec"] == 123.5 and data["max_test_timeout_sec"] == 45.25
    assert data["parser_name"] == "pytest" and data["author_name"] == "Zoë"
    assert data["tags"] == rich_task().tags
    assert data["terminal_agent"]["test_weights"] == {"test_first": 0.1, "test_second": 2.75, "test_third": 1e-3}
    assert (task_dir / "tests" / "test_outputs.py").read_text() == RICH_TESTS
    assert (task_dir / "tests" / "fixtures" / "expected.json").is_file()
    assert (task_dir / "src" / "main.py").read_text(encoding="utf-8") == "print('héllo')\n"
    assert (task_dir / "data.csv").read_bytes() == b'a,b\r\n1,"x, y"\r\n'
    assert os.access(task_dir / "solution.sh", os.X_OK) and os.access(task_dir / "run-tests.sh", os.X_OK)
    assert "test_outputs.py" in (task_dir / "run-tests.sh").read_text()


def test_reading_a_terminal_bench_task_written_elsewhere():
    task = read_tb_task(DATA / "tb_tasks" / "greet-file")
    assert task.task_id == "greet-file"
    assert task.instruction == 'Create /app/greeting.txt containing the line "hello, world".'
    assert task.test_weights == {"test_file_exists": 1.0, "test_text": 1.0}  # equal weights
    assert task.limits.agent_timeout_s == 240.0 and task.limits.test_timeout_s == 30.0
    assert task.files == {"seed.txt": "seed\n", "docker-compose.yaml": (DATA / "tb_tasks/greet-file/docker-compose.yaml").read_text()}
    assert task.metadata["author_email"] == "author@example.com"
    assert task.metadata["expert_time_estimate_min"] == 1
    assert "custom runner" in task.metadata["tb_run_tests_sh"]  # a custom run-tests.sh is kept
    assert task.solution.startswith("#!/bin/bash")


def test_a_foreign_terminal_bench_task_survives_conversion(tmp_path):
    task = read_tb_task(DATA / "tb_tasks" / "greet-file")
    rewritten = write_tb_task(task, tmp_path)
    assert "custom runner" in (rewritten / "run-tests.sh").read_text()
    assert yaml.safe_load((rewritten / "task.yaml").read_text())["author_email"] == "author@example.com"
    assert read_tb_task(rewritten) == task
    # (to Harbor it is refused: its docker-compose.yaml would make a compose task there - tests/test_format_harbor.py)


def _replace_with_link_outside(path):
    outside = path.parents[2] / "outside-secret.txt"
    outside.write_text("secret\n")
    path.unlink()
    path.symlink_to(outside)


@pytest.mark.parametrize(
    "breakage, field",
    [
        (lambda d: (d / "task.yaml").write_text("instruction: [unclosed\n"), "task.yaml"),
        (lambda d: (d / "Dockerfile").unlink(), "Dockerfile"),
        (lambda d: (d / "tests" / "test_outputs.py").unlink(), "tests"),
        (lambda d: (d / "task.yaml").write_text("instruction: ''\n"), "instruction"),
        (lambda d: _replace_with_link_outside(d / "seed.txt"), "files"),
        (lambda d: os.mkfifo(d / "seed.fifo"), "files"),
    ],
)
def test_broken_terminal_bench_dirs_name_the_field(tmp_path, breakage, field):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    breakage(task_dir)
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert info.value.field == field
    assert info.value.location == str(task_dir)


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda data: data.update(terminal_agent={**data["terminal_agent"], "limits": [1]}), "terminal_agent.limits"),
        (lambda data: data.update(terminal_agent={**data["terminal_agent"], "metadata": "x"}), "terminal_agent.metadata"),
    ],
)
def test_wrongly_typed_task_yaml_values_are_format_errors(tmp_path, edit, field):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    data = yaml.safe_load((task_dir / "task.yaml").read_text())
    edit(data)
    (task_dir / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert info.value.field == field and info.value.location == str(task_dir)


def test_early_descriptions_list_and_scalar_tags_are_read(tmp_path):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    data = yaml.safe_load((task_dir / "task.yaml").read_text())
    instruction = data.pop("instruction")
    data.pop("terminal_agent")
    data.update(descriptions=[{"key": "base", "description": instruction}], tags="single")
    (task_dir / "task.yaml").write_text(yaml.safe_dump(data))
    task = read_tb_task(task_dir)
    assert task.instruction == instruction and task.tags == ["single"]
    data["descriptions"] = ["not a mapping"]
    (task_dir / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert info.value.field == "instruction"


# --- binary files and the Harbor-era fields -----------------------------------------------------------
@pytest.mark.parametrize("task", [full_task(), harbor_mode_task()], ids=lambda task: task.task_id)
def test_terminal_bench_round_trips_binary_files_and_every_new_field(tmp_path, task):
    task_dir = write_tb_task(task, tmp_path)
    assert read_tb_task(task_dir) == task
    for relative, content in task.files.items():
        expected = content if isinstance(content, bytes) else content.encode()
        assert (task_dir / relative).read_bytes() == expected, relative  # byte for byte, CRLF kept
    for relative, content in task.test_support_files.items():
        expected = content if isinstance(content, bytes) else content.encode()
        assert (task_dir / "tests" / relative).read_bytes() == expected, relative


def test_new_fields_live_in_the_extra_table_and_solution_files_in_solution_dir(tmp_path):
    task_dir = write_tb_task(full_task(), tmp_path)
    extra = yaml.safe_load((task_dir / "task.yaml").read_text())["terminal_agent"]
    assert extra["docker_image"] == "images.example/full-task:1.0"
    assert extra["env"] == {"API_URL": "${API_URL:-http://localhost:8080}", "MODE": "test"}
    assert extra["verifier"]["separate_environment"] is True and "mode" not in extra["verifier"]  # defaults omitted
    assert extra["limits"]["build_timeout_s"] == 1234.5
    assert extra["solution_files"] == ["fixed.bin", "notes.md"]
    assert (task_dir / "solution" / "fixed.bin").read_bytes() == b"\x00\x01\x02\xff"
    assert (task_dir / "img" / "logo.png").read_bytes() == BINARY_FILES["img/logo.png"]
    # a task without solution files keeps a solution/ build-context directory as a build file
    plain = write_tb_task(rich_task(files={"solution/hint.txt": "h"}), tmp_path / "other")
    assert read_tb_task(plain).files == {"solution/hint.txt": "h"}


def test_solution_files_that_do_not_match_task_yaml_are_an_error(tmp_path):
    task_dir = write_tb_task(full_task(), tmp_path)
    (task_dir / "solution" / "extra.txt").write_text("planted\n")
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert info.value.field == "terminal_agent.solution_files" and "extra.txt" in str(info.value)


def test_a_build_file_under_solution_clashes_only_when_the_task_has_solution_files(tmp_path):
    with pytest.raises(TaskFormatError, match="clashes with the solution files") as info:
        write_tb_task(full_task(files={"solution/x.txt": "x"}), tmp_path)
    assert info.value.field == "files" and "--to harbor" in str(info.value)


def test_a_foreign_task_with_binary_fixtures_reads_them_as_bytes(tmp_path):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    (task_dir / "seed.gz").write_bytes(BINARY_FILES["fixtures/data.csv.gz"])
    (task_dir / "tests" / "expected.bin").write_bytes(b"\x00\xff")
    task = read_tb_task(task_dir)
    assert task.files["seed.gz"] == BINARY_FILES["fixtures/data.csv.gz"]
    assert task.test_support_files["expected.bin"] == b"\x00\xff"


def test_yaml_dates_stay_text_and_values_no_json_format_can_carry_are_refused(tmp_path):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    data = yaml.safe_load((task_dir / "task.yaml").read_text())
    data.pop("terminal_agent")
    text = yaml.safe_dump(data)
    (task_dir / "task.yaml").write_text(text + "created: 2024-05-01\nreviewed: 2024-05-01 10:20:30\n")
    task = read_tb_task(task_dir)
    assert task.metadata["created"] == "2024-05-01" and task.metadata["reviewed"] == "2024-05-01 10:20:30"
    write_tasks_csv([task], tmp_path / "t.csv")  # metadata is JSON-safe, so every writer takes it
    assert read_tasks_csv(tmp_path / "t.csv").tasks == [task]
    assert read_tb_task(write_tb_task(task, tmp_path / "again")) == task
    (task_dir / "task.yaml").write_text(text + "blob: !!binary aGk=\n")
    with pytest.raises(TaskFormatError, match="task.yaml.blob holds a YAML bytes") as info:
        read_tb_task(task_dir)
    assert info.value.field == "task.yaml"
