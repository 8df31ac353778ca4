"""The dataset/ scripts and `terminal-agent tasks convert`, run as real subprocesses."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from task_builders import full_task, harbor_mode_task

from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.loading import load_tasks
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.parquet.rows import read_parquet

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
CONVERT = REPO / "dataset" / "convert_dataset_to_tasks.py"
TO_PARQUET = REPO / "dataset" / "tasks_to_parquet_converter.py"
SAMPLES = REPO / "dataset" / "latest_verified.csv"
BAD_LINES = ["bad_rows.csv:11", "bad_rows.csv:19", "bad_rows.csv:27", "bad_rows.csv:35", "bad_rows.csv:43",
             "bad_rows.csv:51"]


def run(*args: str | Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=120, env=env)


def tree_digest(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_convert_script_writes_every_sample_task(tmp_path):
    out = tmp_path / "tasks"
    result = run(CONVERT, "--csv", SAMPLES, "--out", out, "--workers", "3")
    assert result.returncode == 0, result.stderr
    expected = read_tasks_csv(SAMPLES).tasks
    assert sorted(p.name for p in out.iterdir()) == sorted(task.task_id for task in expected)
    assert sorted(load_tasks(out), key=lambda t: t.task_id) == sorted(expected, key=lambda t: t.task_id)
    assert f"wrote {len(expected)} task(s)" in result.stderr


def test_convert_script_with_bad_rows_converts_the_good_ones_and_fails(tmp_path):
    out = tmp_path / "tasks"
    result = run(CONVERT, "--csv", DATA / "bad_rows.csv", "--out", out, "--format", "harbor")
    assert result.returncode == 1
    assert sorted(p.name for p in out.iterdir()) == ["good-one", "good-two"]
    for location in BAD_LINES:
        assert location in result.stderr, location
    for field in ("[test_weights]", "[prompt]", "[task_id]"):
        assert field in result.stderr


def test_strict_conversion_with_bad_rows_leaves_the_existing_output_untouched(tmp_path):
    out = tmp_path / "tasks"
    assert run(CONVERT, "--csv", SAMPLES, "--out", out).returncode == 0
    before = tree_digest(out)
    result = run(CONVERT, "--csv", DATA / "bad_rows.csv", "--out", out, "--strict")
    assert result.returncode == 1
    assert "bad_rows.csv:27" in result.stderr and "nothing written" in result.stderr
    assert tree_digest(out) == before


def test_a_failure_while_writing_leaves_the_existing_output_untouched(tmp_path):
    out = tmp_path / "tasks"
    assert run(CONVERT, "--csv", SAMPLES, "--out", out).returncode == 0
    before = tree_digest(out)
    # the second task has a file and a directory of the same name: writing it fails midway
    good = read_tasks_csv(SAMPLES).tasks[0]
    broken = Task(**{**good.model_dump(), "task_id": "zz-broken", "files": {"data": "x", "data/inner.txt": "y"}})
    write_tasks_csv([good, broken], tmp_path / "broken.csv")
    result = run(CONVERT, "--csv", tmp_path / "broken.csv", "--out", out, "--workers", "1")
    assert result.returncode != 0
    assert tree_digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.csv", "tasks"]  # no temp dirs left


def test_rows_whose_files_clash_with_the_tb_layout_are_bad_rows_and_the_rest_is_written(tmp_path):
    # like 2 of the 331 rows of a public third-party CSV: environment files under tests/
    good = read_tasks_csv(SAMPLES).tasks[0]
    clash = Task(**{**good.model_dump(), "task_id": "env-under-tests",
                    "files": {"tests/test_utils.py": "def helper():\n    return 1\n", "app.py": "x = 1\n"}})
    write_tasks_csv([good, clash], tmp_path / "clash.csv")
    out = tmp_path / "tasks"
    result = run(CONVERT, "--csv", tmp_path / "clash.csv", "--out", out)
    assert result.returncode == 1
    assert "env-under-tests" in result.stderr and "tests/test_utils.py" in result.stderr
    assert "--to harbor" in result.stderr and "1 bad" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == [good.task_id]
    assert load_tasks(out) == [good]
    # Harbor keeps the environment apart, so the same row converts there
    harbor = tmp_path / "harbor"
    result = run(CONVERT, "--csv", tmp_path / "clash.csv", "--out", harbor, "--format", "harbor")
    assert result.returncode == 0, result.stderr
    (converted,) = [t for t in load_tasks(harbor) if t.task_id == "env-under-tests"]
    assert converted.files == clash.files
    strict = run(CONVERT, "--csv", tmp_path / "clash.csv", "--out", tmp_path / "strict", "--strict")
    assert strict.returncode == 1 and not (tmp_path / "strict").exists()


def test_parquet_script_round_trips_the_samples(tmp_path):
    out = tmp_path / "train.parquet"
    result = run(TO_PARQUET, SAMPLES, "--out", out)
    assert result.returncode == 0, result.stderr
    assert read_parquet(out) == read_tasks_csv(SAMPLES).tasks


def test_parquet_script_split_and_bad_rows(tmp_path):
    train, test = tmp_path / "train.parquet", tmp_path / "test.parquet"
    result = run(TO_PARQUET, SAMPLES, "--out", train, "--test-out", test, "--test-fraction", "0.25", "--seed", "3")
    assert result.returncode == 0, result.stderr
    train_ids = {t.task_id for t in read_parquet(train)}
    test_ids = {t.task_id for t in read_parquet(test)}
    assert len(test_ids) == round(len(read_tasks_csv(SAMPLES).tasks) * 0.25) and not train_ids & test_ids
    assert train_ids | test_ids == {t.task_id for t in read_tasks_csv(SAMPLES).tasks}

    existing = train.read_bytes()
    bad = run(TO_PARQUET, DATA / "bad_rows.csv", "--out", train, "--strict")
    assert bad.returncode == 1 and "bad_rows.csv:35" in bad.stderr
    assert train.read_bytes() == existing


@pytest.mark.parametrize("to, name", [("harbor", "out"), ("csv", "out.csv"), ("parquet", "out.parquet")])
def test_cli_convert_from_task_directories(tmp_path, to, name):
    out = tmp_path / name
    result = run("-m", "terminal_agent", "tasks", "convert", DATA / "tb_tasks", out, "--to", to)
    assert result.returncode == 0, result.stderr
    (task,) = load_tasks(out)
    assert task.task_id == "greet-file" and task.test_weights == {"test_file_exists": 1.0, "test_text": 1.0}


def test_cli_convert_rejects_an_unknown_format(tmp_path):
    result = run("-m", "terminal_agent", "tasks", "convert", SAMPLES, tmp_path / "x", "--to", "yaml")
    assert result.returncode != 0
    assert not (tmp_path / "x").exists()


def test_binary_files_go_from_csv_to_task_directories_and_parquet_through_the_scripts(tmp_path):
    tasks = [full_task(), harbor_mode_task()]
    write_tasks_csv(tasks, tmp_path / "binary.csv")
    out = tmp_path / "tasks"
    result = run(CONVERT, "--csv", tmp_path / "binary.csv", "--out", out)
    assert result.returncode == 0, result.stderr
    assert (out / "full.task" / "img" / "logo.png").read_bytes() == full_task().files["img/logo.png"]
    assert sorted(load_tasks(out), key=lambda t: t.task_id) == sorted(tasks, key=lambda t: t.task_id)
    parquet = tmp_path / "train.parquet"
    result = run(TO_PARQUET, out, "--out", parquet)
    assert result.returncode == 0, result.stderr
    assert sorted(read_parquet(parquet), key=lambda t: t.task_id) == sorted(tasks, key=lambda t: t.task_id)


def test_cli_convert_refuses_an_output_that_is_a_symlink(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    (tmp_path / "out").symlink_to(target)
    result = run("-m", "terminal_agent", "tasks", "convert", DATA / "tb_tasks", tmp_path / "out", "--to", "tb")
    assert result.returncode != 0 and "is a symlink; refusing to write through it" in result.stderr
    assert [p.name for p in target.iterdir()] == ["keep.txt"] and (tmp_path / "out").is_symlink()


def test_the_to_choices_come_from_the_format_registry(tmp_path):
    from terminal_agent.tasks.formats import TASK_FORMATS

    result = run("-m", "terminal_agent", "tasks", "convert", SAMPLES, tmp_path / "x", "--to", "yaml")
    assert f"must be one of {', '.join(TASK_FORMATS.names())}" in result.stderr
    layouts = run(CONVERT, "--help").stdout
    assert "{tb,harbor}" in layouts
