"""Parquet rows for rLLM/verl: round trip, the row shape, the flat extra_info dict and its errors."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from task_builders import TASKS, plain_task, rich_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.parquet_rows import (
    read_parquet,
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
