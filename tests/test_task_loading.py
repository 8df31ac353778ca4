"""load_tasks: detecting every source kind, strict and lenient loading."""

from __future__ import annotations

import pytest
from task_builders import DATA, plain_task, rich_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.csv.format import write_tasks_csv
from terminal_agent.tasks.harbor.format import write_harbor_task
from terminal_agent.tasks.loading import collect_tasks, detect_source_kind, load_tasks
from terminal_agent.tasks.parquet.rows import write_parquet
from terminal_agent.tasks.terminal_bench.format import write_tb_task


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


# --- the format registry ---------------------------------------------------------------------------------
def test_every_format_is_registered_with_detect_read_and_write():
    from terminal_agent.tasks.formats import TASK_FORMATS, DirectoryFormat, directory_formats, file_formats

    assert TASK_FORMATS.names() == ["csv", "harbor", "parquet", "tb"]
    assert [fmt.name for fmt in file_formats()] == ["csv", "parquet"]
    assert [fmt.name for fmt in directory_formats()] == ["tb", "harbor"]  # tb first, as before, for a dir with both
    for name in TASK_FORMATS:
        fmt = TASK_FORMATS.get(name)
        assert fmt.name == name and fmt.summary
        assert fmt.is_directory == isinstance(fmt, DirectoryFormat)


def test_the_registry_refuses_duplicates_and_lists_valid_names_for_unknown_ones():
    from terminal_agent.errors import ConfigError
    from terminal_agent.tasks.conversion import convert_tasks, write_tasks
    from terminal_agent.tasks.csv.format_plugin import CsvFormat
    from terminal_agent.tasks.formats import TASK_FORMATS

    with pytest.raises(ConfigError, match="already registered"):
        TASK_FORMATS.register("csv")(CsvFormat())
    for call in (lambda: write_tasks([plain_task()], "/nonexistent/x", "yaml"),
                 lambda: convert_tasks(DATA / "bad_rows.csv", "/nonexistent/x", "yaml")):
        with pytest.raises(ConfigError, match="unknown task format 'yaml'; valid: csv, harbor, parquet, tb"):
            call()


def test_a_directory_with_both_markers_is_terminal_bench_and_a_parquet_file_is_found_by_its_magic(tmp_path):
    task_dir = write_tb_task(plain_task(), tmp_path / "tb")
    (task_dir / "task.toml").write_text("version = '1.0'\n")
    assert detect_source_kind(task_dir) == "tb"
    write_parquet([plain_task()], tmp_path / "rows.data")
    assert detect_source_kind(tmp_path / "rows.data") == "parquet"
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(TaskFormatError, match=r"unknown task file type \(expected CSV file.*parquet file"):
        detect_source_kind(tmp_path / "notes.txt")


def test_a_collection_lists_members_in_name_order_and_skips_hidden_and_plain_dirs(tmp_path):
    collection = tmp_path / "c"
    for task_id in ("b-task", "a-task"):
        write_tb_task(plain_task(task_id), collection)
    write_harbor_task(plain_task("c-task"), collection)
    (collection / ".cache").mkdir()
    (collection / "docs").mkdir()
    (collection / "README.md").write_text("hi")
    (collection / "readme-link").symlink_to("README.md")  # a link to a file is not a task folder
    tasks, errors = collect_tasks(collection, workers=3)
    assert [task.task_id for task in tasks] == ["a-task", "b-task", "c-task"] and errors == []
