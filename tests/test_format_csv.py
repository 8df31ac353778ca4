"""The CSV format: lossless round trip, bad rows named by line and field, foreign columns, the sample dataset."""

from __future__ import annotations

import ast
import csv
import json
import sys
from pathlib import Path

import pytest
from task_builders import BINARY_FILES, DATA, REPO, TASKS, full_task, harbor_mode_task, plain_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.csv.format import OUR_COLUMNS, STANDARD_COLUMNS, read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.loading import collect_tasks


def test_csv_round_trip_is_lossless(tmp_path):
    path = write_tasks_csv(TASKS, tmp_path / "tasks.csv")
    result = read_tasks_csv(path)
    assert result.errors == []
    assert result.tasks == TASKS


def test_bad_rows_are_reported_with_line_and_field_and_good_rows_kept():
    result = read_tasks_csv(DATA / "bad_rows.csv")
    assert [task.task_id for task in result.tasks] == ["good-one", "good-two"]
    reported = [(error.location, error.field) for error in result.errors]
    assert reported == [
        ("bad_rows.csv:11", "test_weights"),  # bad JSON
        ("bad_rows.csv:19", "test_weights"),  # names a test that does not exist
        ("bad_rows.csv:27", "prompt"),  # empty prompt
        ("bad_rows.csv:35", "task_id"),  # duplicate id
        ("bad_rows.csv:43", "task_id"),  # unsafe id
        ("bad_rows.csv:51", "test_weights"),  # all zero
    ]
    messages = [str(error) for error in result.errors]
    assert "not valid JSON" in messages[0] and "test_zzz" in messages[1]
    assert "first used on line 2" in messages[3] and "safe directory name" in messages[4]


def test_line_numbers_hold_for_crlf_files_with_a_bom(tmp_path):
    text = (DATA / "bad_rows.csv").read_text(encoding="utf-8")
    crlf = tmp_path / "bad_rows.csv"
    crlf.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    result = read_tasks_csv(crlf)
    assert [error.location for error in result.errors] == [error.location for error in read_tasks_csv(DATA / "bad_rows.csv").errors]
    assert [task.task_id for task in result.tasks] == ["good-one", "good-two"]


def test_unknown_columns_and_timestamps_are_kept_in_metadata(tmp_path):
    result = read_tasks_csv(DATA / "bad_rows.csv")
    good_one, good_two = result.tasks
    assert good_one.metadata == {"created_at": "2024-01-01", "updated_at": "2024-01-02", "reviewer": "kim"}
    assert "reviewer" not in good_two.metadata  # empty cell: nothing to keep
    assert good_one.tags == ["x", "y"] and good_one.files == {"a.txt": "hi"}
    assert good_one.instruction == "Line one.\nLine two ✓."
    write_tasks_csv(result.tasks, tmp_path / "out.csv")
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["reviewer"] == "kim" and rows[0]["created_at"] == "2024-01-01" and rows[0]["tags"] == "x|y"
    assert read_tasks_csv(tmp_path / "out.csv").tasks == result.tasks


def test_csv_accepts_a_weight_list_and_a_file_list(tmp_path):
    path = tmp_path / "list.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_id", "prompt", "dockerfile", "test_functions", "test_weights", "additional_files"])
        writer.writerow(["t", "p", "FROM a\n", "def test_x():\n    pass\ndef test_y():\n    pass\n", "[1, 2.5]",
                         json.dumps([{"path": "f.txt", "content": "c"}])])
    (task,) = read_tasks_csv(path).tasks
    assert task.test_weights == {"test_x": 1.0, "test_y": 2.5} and task.files == {"f.txt": "c"}


def test_csv_file_level_problems_raise(tmp_path):
    (tmp_path / "no_cols.csv").write_text("task_id,prompt\nx,y\n")
    with pytest.raises(TaskFormatError, match="test_weights"):
        read_tasks_csv(tmp_path / "no_cols.csv")
    with pytest.raises(TaskFormatError, match="cannot open"):
        read_tasks_csv(tmp_path / "missing.csv")


def test_the_sample_dataset_is_well_formed():
    from terminal_agent.tasks.families.base import DEV_TOOLS

    result = read_tasks_csv(REPO / "dataset" / "latest_verified.csv")
    assert result.errors == []
    assert len(result.tasks) >= 4
    stdlib = set(sys.stdlib_module_names)
    for task in result.tasks:
        assert task.solution and task.solution.startswith("#!/bin/bash"), task.task_id
        assert len(task.test_weights) >= 3, task.task_id
        assert task.dockerfile.startswith("FROM python:3.11-slim-bookworm\nWORKDIR /app\n"), task.task_id
        # packages come only from the one shared Debian layer (DEV_TOOLS of dataset/corpus/_spec.py)
        assert "apt-get" not in task.dockerfile.replace(DEV_TOOLS, ""), task.task_id
        for source in task.files:
            assert source.split("/")[0] in task.dockerfile, f"{task.task_id}: {source} is never copied"
        imported = set()
        for node in ast.walk(ast.parse(task.test_source)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
        shipped = {Path(path).stem for path in task.files if path.endswith(".py")}  # the task's own modules
        shipped |= {Path(path).parts[0] for path in task.files if path.endswith(".py")}  # and packages
        assert imported <= stdlib | shipped | {"pytest"}, f"{task.task_id} tests import {imported - stdlib - shipped}"
        assert "/app" in task.test_source


def _write_rows(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_id", "prompt", "dockerfile", "test_functions", "test_weights"])
        writer.writerows(rows)
    return path


GOOD_TESTS = "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"


def test_a_repeated_task_id_right_after_a_bad_row_is_still_an_error(tmp_path):
    path = _write_rows(tmp_path / "t.csv", [
        ["same", "p", "FROM a\n", GOOD_TESTS, "{not json"],  # bad row (line 2)
        ["same", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}'],  # repeat (line 10)
        ["other", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}'],
    ])
    for tasks, errors in (
        (read_tasks_csv(path).tasks, read_tasks_csv(path).errors),
        collect_tasks(path),
    ):
        assert [task.task_id for task in tasks] == ["other"]
        assert [(error.location, error.field) for error in errors] == [("t.csv:2", "test_weights"), ("t.csv:10", "task_id")]
        assert "first used on line 2" in str(errors[1])


def test_a_byte_that_is_not_utf8_is_reported_at_its_own_line_and_other_rows_go_on(tmp_path):
    path = _write_rows(tmp_path / "t.csv", [
        [f"task-{n}", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}'] for n in range(4)
    ])
    lines = path.read_bytes().split(b"\n")
    # rows start on lines 2, 10, 18, 26; line 23 is inside task-2's test source
    assert lines[17].startswith(b"task-2,") and lines[22].startswith(b"def test_b")
    lines[22] = lines[22].replace(b"test_b", b"test_\xff")
    path.write_bytes(b"\n".join(lines))
    result = read_tasks_csv(path)
    assert [task.task_id for task in result.tasks] == ["task-0", "task-1", "task-3"]
    (error,) = result.errors
    assert error.location == "t.csv:18"
    assert "0xff on line 23 (column 10)" in str(error) and "UTF-8" in str(error)
    header_bad = tmp_path / "h.csv"
    header_bad.write_bytes(b"task_id,pr\xe9mpt\n")
    with pytest.raises(TaskFormatError, match="0xe9 on line 1"):
        read_tasks_csv(header_bad)


def test_weights_that_name_only_some_tests_warn(tmp_path, caplog):
    path = _write_rows(tmp_path / "t.csv", [
        ["partial", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1}'],
        ["full", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 0}'],
    ])
    with caplog.at_level("WARNING", logger="terminal_agent.tasks.model"):
        tasks, errors = collect_tasks(path)
    assert errors == [] and len(tasks) == 2
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "partial" in warnings[0] and "test_b get weight 0" in warnings[0] and "1 of 2" in warnings[0]
    assert tasks[0].unweighted_tests == ["test_b"] and tasks[1].unweighted_tests == []


# --- binary files and the Harbor-era fields -----------------------------------------------------------
@pytest.mark.parametrize("task", [full_task(), harbor_mode_task()], ids=lambda task: task.task_id)
def test_csv_round_trips_binary_files_and_every_new_field(tmp_path, task):
    path = write_tasks_csv([task, plain_task()], tmp_path / "t.csv")
    result = read_tasks_csv(path)
    assert result.errors == [] and result.tasks == [task, plain_task()]
    (read_back, _) = result.tasks
    for field in ("files", "test_support_files", "solution_files"):
        for name, content in getattr(task, field).items():
            assert type(getattr(read_back, field)[name]) is type(content), (field, name)
    with open(path, newline="", encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    files = json.loads(row["additional_files"])
    # text stays a JSON string; bytes become {"base64": ...}
    assert all(isinstance(files[name], dict) and set(files[name]) == {"base64"} for name in set(BINARY_FILES) & set(files))
    assert all(isinstance(files[name], str) for name in set(files) - set(BINARY_FILES))


def test_new_columns_appear_only_when_a_task_uses_them(tmp_path):
    write_tasks_csv([plain_task()], tmp_path / "plain.csv")
    with open(tmp_path / "plain.csv", newline="", encoding="utf-8") as handle:
        assert next(csv.reader(handle)) == STANDARD_COLUMNS + OUR_COLUMNS
    write_tasks_csv([plain_task(), full_task()], tmp_path / "full.csv")
    with open(tmp_path / "full.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[: len(STANDARD_COLUMNS) + len(OUR_COLUMNS) + 4] == (
        STANDARD_COLUMNS + OUR_COLUMNS + ["docker_image", "env", "solution_files", "verifier"]
    )
    assert rows[0]["docker_image"] == "" and rows[1]["docker_image"] == "images.example/full-task:1.0"
    assert json.loads(rows[1]["limits"])["build_timeout_s"] == 1234.5
    assert json.loads(rows[1]["verifier"]) == {
        "env": {"VERIFIER_TOKEN": "${TOKEN:-none}"}, "user": "tester", "network": False, "separate_environment": True,
        "environment_dockerfile": "FROM ubuntu:24.04\nRUN true\n", "artifacts": ["/app/out", "/logs/extra"],
    }
    assert read_tasks_csv(tmp_path / "full.csv").tasks == [plain_task(), full_task()]


def test_the_shipped_csv_reads_and_writes_back_byte_for_byte(tmp_path):
    shipped = REPO / "dataset" / "latest_verified.csv"
    tasks = read_tasks_csv(shipped).tasks
    write_tasks_csv(tasks, tmp_path / "again.csv")
    assert (tmp_path / "again.csv").read_bytes() == shipped.read_bytes()


def test_a_file_list_may_hold_base64_content(tmp_path):
    path = tmp_path / "list.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_id", "prompt", "dockerfile", "test_functions", "test_weights", "additional_files"])
        writer.writerow(["t", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}',
                         json.dumps([{"path": "b.bin", "content": {"base64": "AP8="}}])])
    (task,) = read_tasks_csv(path).tasks
    assert task.files == {"b.bin": b"\x00\xff"}


def _rows_with_files(path, cells):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_id", "prompt", "dockerfile", "test_functions", "test_weights", "additional_files"])
        for number, cell in enumerate(cells):
            writer.writerow([f"t{number}", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}', cell])
    return path


@pytest.mark.parametrize(
    "cell, message",
    [
        (json.dumps({"../x": "evil"}), "stay inside the task"),
        (json.dumps({"/etc/x": "evil"}), "must be relative"),
        (json.dumps({"a\\b": "evil"}), "backslash"),
        (json.dumps({"a/./b": "evil"}), "stay inside the task"),
        (json.dumps({"x\nname": "evil"}), "control character"),
        (json.dumps({"x.bin": {"base64": "not base64!"}}), "base64 is not valid"),
        (json.dumps({"x.bin": {"base64": "AA==", "mode": 7}}), "string (text) or"),
        (json.dumps({"x.bin": 7}), "string (text) or"),
    ],
)
def test_unsafe_or_malformed_additional_files_are_bad_rows_and_the_others_go_on(tmp_path, cell, message):
    path = _rows_with_files(tmp_path / "t.csv", ['{"ok.txt": "fine"}', cell, '{"b.bin": {"base64": "AAE="}}'])
    result = read_tasks_csv(path)
    assert [task.task_id for task in result.tasks] == ["t0", "t2"]
    assert result.tasks[1].files == {"b.bin": b"\x00\x01"}
    (error,) = result.errors
    assert error.field == "additional_files" and error.location == "t.csv:10"
    assert message in str(error)


def test_a_cell_over_the_size_bound_is_a_bad_row_and_the_others_go_on(tmp_path):
    from terminal_agent.tasks.cell_bounds import MAX_TEXT_CELL_CHARS

    path = _write_rows(tmp_path / "t.csv", [
        ["small", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}'],
        ["huge", "x" * (MAX_TEXT_CELL_CHARS + 1), "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}'],
        ["after", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}'],
    ])
    result = read_tasks_csv(path)
    assert [task.task_id for task in result.tasks] == ["small", "after"]
    (error,) = result.errors
    assert error.field == "prompt" and "more than the" in str(error) and "(task_id 'huge')" in str(error)


def test_wrongly_typed_new_columns_name_the_column(tmp_path):
    path = tmp_path / "t.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_id", "prompt", "dockerfile", "test_functions", "test_weights", "env", "verifier"])
        writer.writerow(["a", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}', "[1]", ""])
        writer.writerow(["b", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}', '{"1BAD": "x"}', ""])
        writer.writerow(["c", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}', "", '{"mode": "nope"}'])
        writer.writerow(["d", "p", "FROM a\n", GOOD_TESTS, '{"test_a": 1, "test_b": 1}', '{"OK": "1"}', '{"user": "u"}'])
    result = read_tasks_csv(path)
    assert [task.task_id for task in result.tasks] == ["d"]
    assert result.tasks[0].env == {"OK": "1"} and result.tasks[0].verifier.user == "u"
    assert [error.field for error in result.errors] == ["env", "env", "verifier"]
