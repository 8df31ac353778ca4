"""Hostile task sources (downloaded datasets): nothing outside a task folder is read, written or copied.

Each test plants a file outside the task (a stand-in for /etc/shadow) and a way to reach it - a symlink, a
relative ``..`` link, a symlinked task folder in a collection, a FIFO, an output that is a symlink - and checks
that the reader or writer refuses with an error naming the culprit, that the other tasks still go through, and
that the secret's bytes appear nowhere in what was produced. Where the file system records access times
(relatime), the secret's atime also shows it was never opened.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from task_builders import DATA, plain_task

from terminal_agent.errors import ConfigError, TaskFormatError
from terminal_agent.tasks.conversion import convert_tasks, write_tasks
from terminal_agent.tasks.harbor.format import write_harbor_task
from terminal_agent.tasks.loading import collect_tasks, detect_source_kind
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task

SECRET = b"root:$6$never-leave-the-host$:19000:0:99999:7:::\n"


class Secret:
    """A file outside every task, whose content must never show up and whose access time must not move."""

    def __init__(self, root: Path):
        root.mkdir()
        self.dir = root
        self.path = root / "shadow"
        self.path.write_bytes(SECRET)
        (root / "test_outputs.py").write_text("def test_outside():\n    pass\n")
        (root / "task.yaml").write_text("instruction: from outside\n")
        (root / "Dockerfile").write_text("FROM ubuntu:24.04\n")
        self._stamps = {}
        probe = root / "probe"
        probe.write_bytes(b"x")
        self._age(probe)
        before = probe.stat().st_atime
        probe.read_bytes()
        self.atime_works = probe.stat().st_atime != before
        probe.unlink()
        self._stamps.clear()
        for path in root.iterdir():
            self._age(path)

    def _age(self, path: Path) -> None:
        info = path.stat()
        os.utime(path, (info.st_mtime - 3600, info.st_mtime))  # relatime updates an atime older than mtime
        self._stamps[path] = path.stat().st_atime

    def assert_untouched(self, *produced: Path) -> None:
        for root in produced:
            for path in [root] if root.is_file() else root.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    assert SECRET not in path.read_bytes(), f"the secret leaked into {path}"
        if self.atime_works:  # before this check reads the secret itself
            for path, stamp in self._stamps.items():
                assert path.stat().st_atime == stamp, f"{path.name} outside the task was opened"
        assert self.path.read_bytes() == SECRET


@pytest.fixture
def secret(tmp_path):
    return Secret(tmp_path / "outside")


def _tb_task(parent: Path, task_id: str = "victim") -> Path:
    return write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), parent).rename(parent / task_id)


# --- one terminal-bench task folder ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "plant",
    [
        pytest.param(lambda d, s: (d / "secret.txt").symlink_to(s.path), id="build-file-link"),
        pytest.param(lambda d, s: (d / "notes").symlink_to(os.path.relpath(s.path, d)), id="relative-dotdot-link"),
        pytest.param(lambda d, s: (d / "vendor").symlink_to(s.dir, target_is_directory=True), id="link-to-dir"),
        pytest.param(lambda d, s: (d / "tests" / "fixture.txt").symlink_to(s.path), id="test-fixture-link"),
        pytest.param(lambda d, s: ((d / "Dockerfile").unlink(), (d / "Dockerfile").symlink_to(s.dir / "Dockerfile")),
                     id="dockerfile-link"),
        pytest.param(lambda d, s: ((d / "task.yaml").unlink(), (d / "task.yaml").symlink_to(s.dir / "task.yaml")),
                     id="task-yaml-link"),
        pytest.param(lambda d, s: _replace_dir_with_link(d / "tests", s.dir), id="tests-dir-link"),
        pytest.param(lambda d, s: ((d / "solution.sh").unlink(), (d / "solution.sh").symlink_to(s.path)),
                     id="solution-link"),
        pytest.param(lambda d, s: (d / "deep" / "er").mkdir(parents=True) or (d / "deep" / "er" / "x").symlink_to(
            "../../../../outside/shadow"), id="nested-dotdot-link"),
    ],
)
def test_a_terminal_bench_folder_that_reaches_outside_is_refused(tmp_path, secret, plant):
    task_dir = _tb_task(tmp_path / "src")
    plant(task_dir, secret)
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert "leaves the task folder" in str(info.value) and info.value.location == str(task_dir)
    assert SECRET.decode() not in str(info.value)
    secret.assert_untouched()


def _replace_dir_with_link(path: Path, target: Path) -> None:
    for child in path.iterdir():
        child.unlink()
    path.rmdir()
    path.symlink_to(target, target_is_directory=True)


def test_a_fifo_in_a_task_folder_is_refused_without_blocking(tmp_path):
    task_dir = _tb_task(tmp_path / "src")
    os.mkfifo(task_dir / "tests" / "pipe")  # a reader that opened it blocking would hang here forever
    with pytest.raises(TaskFormatError, match="not a regular file") as info:
        read_tb_task(task_dir)
    assert "pipe" in str(info.value)


def test_links_that_stay_inside_the_task_are_read(tmp_path):
    task_dir = _tb_task(tmp_path / "src")
    (task_dir / "alias.txt").symlink_to("seed.txt")
    assert read_tb_task(task_dir).files["alias.txt"] == "seed\n"


# --- collections ------------------------------------------------------------------------------------------------
def _collection(tmp_path: Path) -> Path:
    collection = tmp_path / "collection"
    write_tb_task(plain_task("good-tb"), collection)
    write_harbor_task(plain_task("good-harbor"), collection)
    return collection


def test_a_symlinked_task_folder_in_a_collection_is_refused_and_the_others_load(tmp_path, secret):
    collection = _collection(tmp_path)
    (collection / "borrowed").symlink_to(secret.dir, target_is_directory=True)  # secret.dir looks like a tb task
    assert detect_source_kind(collection) == "collection"
    tasks, errors = collect_tasks(collection)
    assert sorted(task.task_id for task in tasks) == ["good-harbor", "good-tb"]
    (error,) = errors
    assert error.location == str(collection / "borrowed") and "symlink" in str(error)
    assert "outside the collection" in str(error)
    out = tmp_path / "out"
    report = convert_tasks(collection, out, "tb")
    assert sorted(p.name for p in out.iterdir()) == ["good-harbor", "good-tb"] and len(report.errors) == 1
    secret.assert_untouched(out)


def test_a_collection_whose_only_entry_is_a_link_outside_yields_only_an_error(tmp_path, secret):
    collection = tmp_path / "collection"
    collection.mkdir()
    (collection / "only").symlink_to(secret.dir, target_is_directory=True)
    tasks, errors = collect_tasks(collection)
    assert tasks == [] and len(errors) == 1
    secret.assert_untouched()


@pytest.mark.parametrize("layout", ["tb", "harbor"])
def test_a_secret_link_in_one_task_of_a_collection_spoils_only_that_task(tmp_path, secret, layout):
    collection = _collection(tmp_path)
    if layout == "tb":
        victim = write_tb_task(plain_task("victim"), collection)
        (victim / "secret.txt").symlink_to(secret.path)
    else:
        victim = write_harbor_task(plain_task("victim"), collection)
        (victim / "environment" / "secret.txt").symlink_to(secret.path)
    out = tmp_path / "converted.csv"
    report = convert_tasks(collection, out, "csv")
    assert sorted(task.task_id for task in report.tasks) == ["good-harbor", "good-tb"]
    (error,) = report.errors
    assert error.location == str(victim) and "secret.txt" in str(error) and "leaves the task folder" in str(error)
    secret.assert_untouched(out)


# --- writers ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("to, name", [("tb", "out"), ("harbor", "out"), ("csv", "out.csv"), ("parquet", "out.pq")])
def test_an_output_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path, secret, to, name):
    link = tmp_path / name
    link.symlink_to(secret.dir if to in ("tb", "harbor") else secret.path)
    before = sorted(p.name for p in secret.dir.iterdir())
    with pytest.raises(ConfigError, match="symlink"):
        convert_tasks(DATA / "tb_tasks", link, to)
    with pytest.raises(ConfigError, match="symlink"):
        write_tasks([plain_task()], link, to)
    assert link.is_symlink() and sorted(p.name for p in secret.dir.iterdir()) == before
    secret.assert_untouched()


def test_an_output_directory_holding_a_symlink_is_not_replaced(tmp_path, secret):
    out = tmp_path / "out"
    write_tb_task(plain_task("old"), out)
    (out / "linked").symlink_to(secret.dir, target_is_directory=True)  # looks like a task directory through the link
    with pytest.raises(ConfigError, match="'linked', which is a symlink"):
        convert_tasks(DATA / "tb_tasks", out, "tb")
    assert sorted(p.name for p in out.iterdir()) == ["linked", "old"]
    secret.assert_untouched()


@pytest.mark.parametrize("to", ["tb", "harbor"])
def test_a_task_id_that_would_escape_is_refused_by_the_writers(tmp_path, to):
    # Task validation refuses such an id; a Task built without validation must not get past the writer either
    escaping = Task.model_construct(**{**plain_task().__dict__, "task_id": "../escaped"})
    out = tmp_path / "inner" / "out"
    with pytest.raises(TaskFormatError, match="safe directory name"):
        write_tasks([plain_task(), escaping], out, to)
    assert not (tmp_path / "inner" / "escaped").exists() and not (tmp_path / "escaped").exists()
    assert not out.exists()


def test_file_paths_that_would_escape_are_refused_by_the_writers(tmp_path):
    escaping = Task.model_construct(**{**plain_task().__dict__, "files": {"../../planted.txt": "x"}})
    with pytest.raises(TaskFormatError, match="stay inside the task"):
        write_tasks([escaping], tmp_path / "a" / "out", "tb")
    assert not any(path.name == "planted.txt" for path in tmp_path.rglob("*"))


def test_two_tasks_with_one_id_never_share_a_directory(tmp_path):
    from terminal_agent.tasks.conversion import split_by_layout

    first, second = plain_task("same"), plain_task("same").model_copy(update={"instruction": "Other."})
    writable, errors = split_by_layout([first, second], "tb")
    assert writable == [first] and errors[0].field == "task_id"
    with pytest.raises(TaskFormatError, match="share this task_id"):
        write_tasks([first, second], tmp_path / "out", "harbor")
    assert not (tmp_path / "out").exists()


def test_a_source_that_is_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "tasks.csv")
    with pytest.raises(TaskFormatError, match="not a regular file or a directory"):
        collect_tasks(tmp_path / "tasks.csv")
