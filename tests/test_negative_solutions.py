"""Negative solutions (``Task.negative_solutions``): the model, every format's round trip, bad data naming the field,
and validation enforcing the most each may earn (in real containers)."""

from __future__ import annotations

import csv
import json
import tomllib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pydantic import ValidationError
from task_builders import DATA, full_task, harbor_mode_task, plain_task, rich_task

from terminal_agent.task_quality.no_work_rule import check_against_manifest
from terminal_agent.tasks.csv.format import OUR_COLUMNS, STANDARD_COLUMNS, read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.harbor.format import read_harbor_task, write_harbor_task
from terminal_agent.tasks.model import NegativeSolution, Task
from terminal_agent.tasks.parquet.rows import read_parquet_with_errors, task_to_flat_dict, task_to_row, write_parquet
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task

REWRITE = NegativeSolution(name="python-rewrite", script="#!/bin/bash\nprintf 'x ✓\\n' > /app/out.txt\n",
                           max_score=0.25, why="a Python stand-in, not the asked-for C fix")
HEAD = NegativeSolution(name="head-hash", script="git -C /app/repo rev-parse HEAD > /app/first_bad.txt\n")


def format_tasks() -> list[Task]:
    return [
        rich_task(task_id="rich-negatives", negative_solutions=[REWRITE, HEAD]),
        full_task(task_id="full-negatives", negative_solutions=[HEAD]),
        harbor_mode_task(task_id="harbor-negatives", negative_solutions=[REWRITE]),
        plain_task("no-negatives"),
    ]


def test_the_model_refuses_bad_negative_solutions():
    with pytest.raises(ValidationError, match="max_score"):
        NegativeSolution(name="x", script="true", max_score=1.0)
    with pytest.raises(ValidationError, match="name"):
        NegativeSolution(name="Has Space", script="true")
    with pytest.raises(ValidationError, match="empty"):
        NegativeSolution(name="x", script="  \n")
    with pytest.raises(ValidationError, match="repeat: head-hash"):
        plain_task().model_copy(update={}).model_validate({**plain_task().model_dump(),
                                                           "negative_solutions": [HEAD, HEAD]})


def test_negative_solutions_change_the_hashes_only_when_set():
    plain = plain_task()
    assert "negative_solutions" not in plain.content_hashes()
    with_one = Task.model_validate({**plain.model_dump(), "negative_solutions": [HEAD]})
    assert {k: v for k, v in with_one.content_hashes().items() if k != "negative_solutions"} == plain.content_hashes()
    loosened = Task.model_validate({**plain.model_dump(), "negative_solutions": [HEAD.model_copy(update={"max_score": 0.5})]})
    assert loosened.content_hashes()["negative_solutions"] != with_one.content_hashes()["negative_solutions"]


def test_csv_round_trips_negative_solutions_and_files_without_them_keep_their_header(tmp_path):
    tasks = format_tasks()
    path = write_tasks_csv(tasks, tmp_path / "tasks.csv")
    result = read_tasks_csv(path)
    assert result.errors == [] and result.tasks == tasks
    assert "negative_solutions" in path.read_text().splitlines()[0].split(",")
    plain = write_tasks_csv([plain_task(), rich_task(metadata={})], tmp_path / "plain.csv")
    assert plain.read_text().splitlines()[0] == ",".join(STANDARD_COLUMNS + OUR_COLUMNS)


def test_parquet_round_trips_negative_solutions_with_one_schema(tmp_path):
    tasks = format_tasks()
    read_back, errors = read_parquet_with_errors(write_parquet(tasks, tmp_path / "tasks.parquet"))
    assert errors == [] and read_back == tasks
    assert task_to_flat_dict(plain_task())["negative_solutions"] == ""
    assert json.loads(task_to_flat_dict(tasks[1])["negative_solutions"])[0]["name"] == "head-hash"


@pytest.mark.parametrize("task", [t for t in format_tasks() if t.task_id != "harbor-negatives"],
                         ids=lambda task: task.task_id)
def test_terminal_bench_round_trips_negative_solutions_under_its_own_key(tmp_path, task):
    task_dir = write_tb_task(task, tmp_path)
    assert read_tb_task(task_dir) == task
    extra = yaml.safe_load((task_dir / "task.yaml").read_text())["terminal_agent"]
    assert [n["name"] for n in extra.get("negative_solutions", [])] == [n.name for n in task.negative_solutions]


@pytest.mark.parametrize("task", format_tasks(), ids=lambda task: task.task_id)
def test_harbor_round_trips_negative_solutions_in_our_table(tmp_path, task):
    task_dir = write_harbor_task(task, tmp_path)
    assert read_harbor_task(task_dir) == task
    table = tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["terminal_agent"]
    assert ("negative_solutions_json" in table) == bool(task.negative_solutions)


def test_a_harbor_native_task_keeps_its_negative_solutions_in_the_overlay(tmp_path):
    native = read_harbor_task(DATA / "harbor_tasks" / "sum-numbers")
    task = Task.model_validate({**native.model_dump(), "negative_solutions": [REWRITE]})
    back = read_harbor_task(write_harbor_task(task, tmp_path))
    assert back.negative_solutions == [REWRITE]
    overlay = tomllib.loads((tmp_path / task.task_id / "task.toml").read_text())["metadata"]["terminal_agent"]
    assert overlay["harbor_native"] is True and "negative_solutions_json" in overlay


def test_bad_negative_solutions_name_the_field_and_the_other_rows_load(tmp_path):
    tasks = [Task.model_validate({**plain_task(name).model_dump(), "negative_solutions": [HEAD]})
             for name in ("good", "bad", "worse")]
    path = write_tasks_csv(tasks, tmp_path / "tasks.csv")
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    column = rows[0].index("negative_solutions")
    rows[2][column] = json.dumps([{"name": "x", "script": "true", "max_score": 2}])
    rows[3][column] = "{not json"
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    result = read_tasks_csv(path)
    assert [task.task_id for task in result.tasks] == ["good"]
    assert [error.field for error in result.errors] == ["negative_solutions", "negative_solutions"]

    parquet_rows = [task_to_row(task, index=index) for index, task in enumerate(tasks)]
    parquet_rows[1]["extra_info"]["negative_solutions"] = json.dumps({"name": "not a list"})
    pq.write_table(pa.Table.from_pylist(parquet_rows), tmp_path / "tasks.parquet")
    read_back, errors = read_parquet_with_errors(tmp_path / "tasks.parquet")
    assert [task.task_id for task in read_back] == ["good", "worse"]
    assert errors[0].location.endswith("row 1") and errors[0].field.startswith("negative_solutions")


def test_the_manifest_check_refuses_a_negative_solution_over_its_bound_or_unscored():
    task = Task.model_validate({**plain_task().model_dump(), "negative_solutions": [REWRITE]})
    entry = {"hashes": task.content_hashes(), "noop_score": 0.0, "empty_score": 0.0, "oracle_score": 1.0, "ok": True}
    assert check_against_manifest([task], {"tasks": {task.task_id: entry}}) == [
        f"{task.task_id}: negative solution python-rewrite was not scored; re-validate it"]
    over = {**entry, "negative_scores": {"python-rewrite": 0.5}}
    assert "negative solution python-rewrite scores 0.500 > its max 0.25" in check_against_manifest(
        [task], {"tasks": {task.task_id: over}})[0]
    fine = {**entry, "negative_scores": {"python-rewrite": 0.25}}
    assert check_against_manifest([task], {"tasks": {task.task_id: fine}}) == []
