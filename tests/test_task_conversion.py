"""Across formats and conversion: chained formats, layout clashes, atomic output, convert and split."""

from __future__ import annotations

import os
import stat

import pytest
from task_builders import DATA, full_task, harbor_mode_task, plain_task, rich_task

from terminal_agent.errors import ConfigError, TaskFormatError
from terminal_agent.tasks.atomic_output import atomic_output_dir, atomic_output_file
from terminal_agent.tasks.conversion import convert_tasks, split_by_layout, split_tasks, write_tasks
from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.harbor.format import read_harbor_task, write_harbor_task
from terminal_agent.tasks.loading import load_tasks
from terminal_agent.tasks.parquet.rows import read_parquet, write_parquet
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task


def test_every_format_chained_returns_the_same_task(tmp_path):
    task = rich_task()
    via_tb = read_tb_task(write_tb_task(task, tmp_path / "tb"))
    via_harbor = read_harbor_task(write_harbor_task(via_tb, tmp_path / "harbor"))
    write_tasks_csv([via_harbor], tmp_path / "t.csv")
    via_csv = read_tasks_csv(tmp_path / "t.csv").tasks[0]
    write_parquet([via_csv], tmp_path / "t.parquet")
    assert read_parquet(tmp_path / "t.parquet") == [task]


def test_an_empty_task_list_round_trips(tmp_path):
    write_tasks_csv([], tmp_path / "e.csv")
    assert read_tasks_csv(tmp_path / "e.csv").tasks == []
    write_parquet([], tmp_path / "e.parquet")
    assert read_parquet(tmp_path / "e.parquet") == []


def test_writers_refuse_files_that_clash_with_the_layout(tmp_path):
    with pytest.raises(TaskFormatError, match="clashes"):
        write_tb_task(rich_task(files={"tests/x.py": "x"}), tmp_path)
    with pytest.raises(TaskFormatError, match="clashes"):
        write_harbor_task(rich_task(test_support_files={"test.sh": "x"}), tmp_path)


def test_a_failed_directory_write_leaves_the_old_output_intact(tmp_path):
    out = tmp_path / "out"
    write_tb_task(plain_task(), out)
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    with pytest.raises(RuntimeError):
        with atomic_output_dir(out) as temp_dir:
            write_tb_task(rich_task(), temp_dir)
            raise RuntimeError("crash in the middle")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temp dir left behind


def test_convert_writes_good_tasks_and_strict_writes_nothing(tmp_path):
    out = tmp_path / "tasks"
    report = convert_tasks(DATA / "bad_rows.csv", out, "harbor")
    assert not report.ok and len(report.errors) == 6
    assert sorted(p.name for p in out.iterdir()) == ["good-one", "good-two"]
    write_tb_task(plain_task("older"), tmp_path / "keep")
    strict = convert_tasks(DATA / "bad_rows.csv", tmp_path / "keep", "tb", strict=True)
    assert strict.output is None
    assert [p.name for p in (tmp_path / "keep").iterdir()] == ["older"]


def test_convert_refuses_to_replace_a_directory_that_is_not_tasks(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="refusing"):
        convert_tasks(DATA / "tb_tasks", tmp_path, "tb")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_split_is_deterministic_and_disjoint():
    tasks = [plain_task(f"t{i}") for i in range(10)]
    train, test = split_tasks(tasks, 0.3, seed=1)
    assert len(test) == 3 and len(train) == 7
    assert {t.task_id for t in train}.isdisjoint({t.task_id for t in test})
    assert split_tasks(tasks, 0.3, seed=1) == (train, test)
    assert split_tasks(tasks, 0.3, seed=2) != (train, test)


def test_atomic_output_honours_the_umask_without_changing_it(tmp_path):
    previous = os.umask(0o027)
    try:
        with atomic_output_file(tmp_path / "out.csv") as temp:
            temp.write_text("x")
        with atomic_output_dir(tmp_path / "tasks") as temp_dir:
            (temp_dir / "a").mkdir()
        assert os.umask(0o027) == 0o027  # reading the umask did not leave it changed
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out.csv").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "tasks").stat().st_mode) == 0o750


@pytest.mark.parametrize("task", [full_task(), harbor_mode_task()], ids=lambda task: task.task_id)
def test_binary_files_and_new_fields_survive_a_chain_of_csv_parquet_and_terminal_bench(tmp_path, task):
    write_tasks_csv([task], tmp_path / "t.csv")
    assert convert_tasks(tmp_path / "t.csv", tmp_path / "t.parquet", "parquet").ok
    assert convert_tasks(tmp_path / "t.parquet", tmp_path / "tb", "tb").ok
    assert convert_tasks(tmp_path / "tb", tmp_path / "back.csv", "csv").ok
    assert read_tasks_csv(tmp_path / "back.csv").tasks == [task]
    assert (tmp_path / "tb" / task.task_id / "tests" / next(iter(task.test_support_files))).is_file()


def test_progress_is_reported_per_task_for_reading_and_writing(tmp_path):
    calls = []
    for task_id in ("a", "b", "c"):
        write_tb_task(plain_task(task_id), tmp_path / "src")
    convert_tasks(tmp_path / "src", tmp_path / "out", "harbor", workers=2,
                  progress=lambda done, total, phase: calls.append((phase, done, total)))
    assert [call for call in calls if call[0] == "read"] == [("read", 1, 3), ("read", 2, 3), ("read", 3, 3)]
    assert [call for call in calls if call[0] == "write"] == [("write", 1, 3), ("write", 2, 3), ("write", 3, 3)]


@pytest.mark.parametrize("to, name", [("csv", "t.csv"), ("parquet", "t.parquet")])
def test_metadata_json_cannot_carry_is_an_error_for_that_task_only(tmp_path, to, name):
    import datetime

    odd = plain_task("odd").model_copy(update={"metadata": {"when": datetime.date(2024, 5, 1)}})
    writable, errors = split_by_layout([plain_task("a"), odd, plain_task("b")], to)
    assert [task.task_id for task in writable] == ["a", "b"]
    (error,) = errors
    assert error.location == "odd" and error.field == "metadata" and "'when'" in str(error)
    write_tasks(writable, tmp_path / name, to)
    assert [task.task_id for task in load_tasks(tmp_path / name)] == ["a", "b"]
