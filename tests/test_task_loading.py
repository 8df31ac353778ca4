"""load_tasks: detecting every source kind, strict and lenient loading."""

from __future__ import annotations

import pytest
from task_builders import DATA, plain_task, rich_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.csv_format import write_tasks_csv
from terminal_agent.tasks.harbor import write_harbor_task
from terminal_agent.tasks.loading import detect_source_kind, load_tasks
from terminal_agent.tasks.parquet_rows import write_parquet
from terminal_agent.tasks.terminal_bench import write_tb_task


def test_load_tasks_detects_every_source_kind(tmp_path):
    tasks = [rich_task(), plain_task()]
    write_tasks_csv(tasks, tmp_path / "t.csv")
    write_parquet(tasks, tmp_path / "t.parquet")
    for task in tasks:
        write_tb_task(task, tmp_path / "tb")
        write_harbor_task(task, tmp_path / "harbor")
    mixed = tmp_path / "mixed"
    write_tb_task(tasks[0], mixed)
    write_harbor_task(tasks[1], mixed)
    assert detect_source_kind(tmp_path / "t.csv") == "csv"
    assert detect_source_kind(tmp_path / "tb" / "plain") == "tb"
    assert detect_source_kind(tmp_path / "harbor" / "plain") == "harbor"
    assert detect_source_kind(mixed) == "collection"
    for source in ("t.csv", "t.parquet", "tb", "harbor", "mixed"):
        assert sorted(load_tasks(tmp_path / source), key=lambda t: t.task_id) == sorted(tasks, key=lambda t: t.task_id)
    assert load_tasks(tmp_path / "tb" / "plain") == [plain_task()]
    with pytest.raises(TaskFormatError, match="not a task source"):
        load_tasks(tmp_path / "tb" / "plain" / "tests")


def test_load_tasks_is_strict_unless_asked(caplog):
    with pytest.raises(TaskFormatError) as info:
        load_tasks(DATA / "bad_rows.csv")
    assert "6 bad task(s)" in str(info.value) and "bad_rows.csv:43" in str(info.value)
    good = load_tasks(DATA / "bad_rows.csv", strict=False)
    assert [task.task_id for task in good] == ["good-one", "good-two"]
    assert sum("bad_rows.csv:" in record.getMessage() for record in caplog.records) == 6
