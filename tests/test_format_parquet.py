"""Parquet rows for rLLM/verl: round trip, the row shape, the flat extra_info dict and its errors."""

from __future__ import annotations

import base64
import json

import pyarrow.parquet as pq
import pytest
from task_builders import BINARY_FILES, TASKS, full_task, harbor_mode_task, plain_task, rich_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.parquet.rows import (
    FLAT_TASK_KEYS,
    read_parquet,
    read_parquet_with_errors,
    task_from_flat_dict,
    task_to_flat_dict,
    task_to_row,
    write_parquet,
)


def test_parquet_round_trip_is_lossless(tmp_path):
    path = write_parquet(TASKS, tmp_path / "train.parquet")
    assert read_parquet(path) == TASKS


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.task_id)
def test_flat_dict_round_trip_and_json_safety(task):
    flat = task_to_flat_dict(task)
    assert all(isinstance(value, (str, int, float, bool)) for value in flat.values())
    assert json.loads(json.dumps(flat)) == flat
    assert task_from_flat_dict(flat) == task
    assert task_from_flat_dict(json.dumps(flat)) == task


def test_parquet_rows_have_the_shape_verl_and_rllm_expect(tmp_path):
    row = task_to_row(rich_task(), split="test", index=7)
    assert row["prompt"] == [{"role": "user", "content": rich_task().instruction}]
    assert row["data_source"] == "terminal_agent"
    write_parquet([rich_task(), plain_task()], tmp_path / "d.parquet")
    table = pq.read_table(tmp_path / "d.parquet")
    assert {"prompt", "data_source", "extra_info", "reward_model", "ability"} <= set(table.column_names)
    extra = table.column("extra_info").to_pylist()
    # verl's RLHFDataset calls extra_info.get("index"): a mapping, numbered in file order
    assert [info.get("index") for info in extra] == [0, 1]
    # rLLM calls env_class.from_dict({**extra_info, **env_args}); unknown keys are ignored
    env_args = {"max_steps": 12, "reward_fn": "weighted", "some_flag": True}
    assert task_from_flat_dict({**extra[0], **env_args}) == rich_task()


def test_flat_dict_reports_the_bad_field():
    flat = task_to_flat_dict(plain_task())
    with pytest.raises(TaskFormatError) as info:
        task_from_flat_dict({**flat, "test_weights": "{not json"})
    assert info.value.field == "test_weights"
    with pytest.raises(TaskFormatError) as info:
        task_from_flat_dict({**flat, "test_weights": json.dumps({"test_nope": 1})})
    assert info.value.field == "task"
    assert "test_nope" in str(info.value)
    with pytest.raises(TaskFormatError) as info:
        task_from_flat_dict({**flat, "limits": "[1]"})
    assert info.value.field == "limits" and "JSON object" in str(info.value)
    assert task_from_flat_dict({**flat, "limits": "null"}).limits == plain_task().limits


# --- binary files, the Harbor-era fields, hostile rows -------------------------------------------------
FULL_TASKS = [full_task(), harbor_mode_task()]


@pytest.mark.parametrize("task", FULL_TASKS, ids=lambda task: task.task_id)
def test_flat_dict_carries_binary_files_and_every_new_field(task):
    flat = task_to_flat_dict(task)
    assert set(flat) == FLAT_TASK_KEYS - {"limits"}  # every row has every key (one struct schema); "limits" is read only
    assert all(isinstance(value, (str, int, float, bool)) for value in flat.values())
    assert json.loads(json.dumps(flat)) == flat
    assert task_from_flat_dict(flat) == task
    # rLLM: from_dict({**extra_info, **env_args}) after json-loading a string extra_info
    assert task_from_flat_dict({**json.loads(json.dumps(flat)), "max_steps": 3}) == task


def test_parquet_file_round_trips_binary_files_and_new_fields(tmp_path):
    tasks = [*FULL_TASKS, *TASKS]
    path = write_parquet(tasks, tmp_path / "t.parquet")
    assert read_parquet(path) == tasks
    extra = pq.read_table(path).column("extra_info").to_pylist()[0]
    files = json.loads(extra["files"])
    assert files["img/logo.png"] == {"base64": base64.b64encode(BINARY_FILES["img/logo.png"]).decode()}
    assert files["notes/crlf.txt"] == "one\r\ntwo\r\n"
    assert extra["docker_image"] == "images.example/full-task:1.0" and extra["has_docker_image"] is True
    assert extra["limit_build_timeout_s"] == 1234.5
    assert json.loads(extra["verifier"])["user"] == "tester"
    assert json.loads(extra["env"]) == {"API_URL": "${API_URL:-http://localhost:8080}", "MODE": "test"}


def test_rows_written_before_the_new_keys_read_with_their_defaults():
    flat = task_to_flat_dict(plain_task())
    for key in ("docker_image", "has_docker_image", "env", "solution_files", "verifier", "limit_build_timeout_s"):
        del flat[key]
    assert task_from_flat_dict(flat) == plain_task()


def _row_with(**changes):
    flat = task_to_flat_dict(plain_task())
    flat.update(changes)
    return flat


@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"files": json.dumps({"../escape": "x"})}, "files", "stay inside the task"),
        ({"files": json.dumps({"/etc/cron.d/x": "x"})}, "files", "must be relative"),
        ({"test_support_files": json.dumps({"a\\b": "x"})}, "test_support_files", "backslash"),
        ({"solution_files": json.dumps({"s.bin": {"base64": "%%%"}})}, "solution_files", "base64 is not valid"),
        ({"files": json.dumps(["not", "a", "map"])}, "files", "must be an object"),
        ({"env": json.dumps({"bad name": "x"})}, "env", "not a valid environment variable name"),
        ({"verifier": json.dumps({"mode": "judge"})}, "verifier.mode", "weighted_pytest"),
        ({"task_id": "../../etc"}, "task_id", "safe directory name"),
    ],
)
def test_hostile_or_malformed_rows_are_errors_for_that_row_only(tmp_path, changes, field, message):
    import pyarrow as pa

    rows = [task_to_row(rich_task(), index=0), {**task_to_row(plain_task(), index=1)}, task_to_row(full_task(), index=2)]
    rows[1]["extra_info"] = _row_with(**changes, index=1, split="train")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "t.parquet")
    tasks, errors = read_parquet_with_errors(tmp_path / "t.parquet")
    assert tasks == [rich_task(), full_task()]
    (error,) = errors
    assert error.location == "t.parquet:row 1" and error.field == field and message in str(error), str(error)


def test_a_row_over_the_size_bound_is_an_error_for_that_row_only(tmp_path):
    from terminal_agent.tasks.cell_bounds import MAX_TEXT_CELL_CHARS

    rows = [task_to_row(plain_task("a")), task_to_row(plain_task("b"), index=1), task_to_row(plain_task("c"), index=2)]
    rows[1]["extra_info"]["instruction"] = "x" * (MAX_TEXT_CELL_CHARS + 1)
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "t.parquet")
    tasks, errors = read_parquet_with_errors(tmp_path / "t.parquet")
    assert [task.task_id for task in tasks] == ["a", "c"]
    (error,) = errors
    assert error.location == "t.parquet:row 1" and error.field == "instruction" and "more than the" in str(error)


def test_a_repeated_task_id_is_an_error_on_the_later_rows(tmp_path):
    path = write_parquet([plain_task("a"), plain_task("b"), plain_task("a")], tmp_path / "t.parquet")
    tasks, errors = read_parquet_with_errors(path)
    assert [task.task_id for task in tasks] == ["a", "b"]
    (error,) = errors
    assert error.location == "t.parquet:row 2" and error.field == "task_id" and "first used on row 0" in str(error)


def test_the_env_rebuilds_a_full_task_from_a_json_loaded_row_with_env_args():
    from terminal_agent.env import DockerIsolatedEnv

    extra_info = json.loads(json.dumps(task_to_row(full_task(), index=4)["extra_info"]))  # as rLLM hands it over
    env = DockerIsolatedEnv.from_dict({**extra_info, "max_steps": 3})
    assert env.task == full_task() and env.config.max_steps == 3
    assert env.task.files["img/logo.png"] == BINARY_FILES["img/logo.png"]
