"""Load tasks from any supported source, detecting its format through the format registry.

Sources: a file of a file format (CSV, parquet), a task directory of a directory format (terminal-bench
``task.yaml``, Harbor ``task.toml``), or a *collection*: a directory whose subdirectories are task directories
(formats may be mixed). The formats are :data:`~terminal_agent.tasks.formats.TASK_FORMATS`; nothing here names
one.

A collection is untrusted like the task folders in it: a subdirectory that is a symlink is refused (an error
for that entry, the others go on), so a downloaded dataset cannot make a reader leave it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.formats import (
    DirectoryFormat,
    ProgressCallback,
    TaskFormat,
    map_in_pool,
    split_outcomes,
    directory_formats,
    file_formats,
    read_task_dir,
    task_dir_format,
)
from terminal_agent.tasks.model import Task, warn_unweighted_tests

logger = logging.getLogger(__name__)

__all__ = ["COLLECTION", "ProgressCallback", "collect_tasks", "detect_source_kind", "load_tasks"]

#: The kind of a directory of task directories.
COLLECTION = "collection"


@dataclass
class _Source:
    """What a path was found to be: one format's source, or a collection with its members (detected once)."""

    kind: str
    fmt: TaskFormat | None = None
    members: list[tuple[Path, DirectoryFormat | TaskFormatError]] | None = None


def _collection_members(path: Path) -> list[tuple[Path, DirectoryFormat | TaskFormatError]]:
    """The task directories of ``path`` (sorted by name) with their format, and an error per symlinked one."""
    formats = directory_formats()
    members: list[tuple[Path, DirectoryFormat | TaskFormatError]] = []
    for child in sorted(path.iterdir()):
        if child.name.startswith("."):
            continue
        if child.is_symlink():
            if child.is_dir():  # a link to a file is not a task folder and was never read
                target = child.resolve()
                where = "outside the collection" if path.resolve() not in target.parents else "inside the collection"
                members.append((child, TaskFormatError(
                    f"is a symlink to a directory {where} ({target}); refused: the task folders of a collection "
                    "must be real directories inside it",
                    location=str(child), field="files",
                )))
            continue
        if child.is_dir():
            fmt = task_dir_format(child, formats)
            if fmt is not None:
                members.append((child, fmt))
    return members


def _resolve_source(path: Path) -> _Source:
    if not path.exists():
        raise TaskFormatError("no such file or directory", location=str(path))
    if not path.is_file() and not path.is_dir():
        raise TaskFormatError("not a regular file or a directory (a FIFO, socket or device is no task source)",
                              location=str(path))
    if path.is_file():
        for fmt in file_formats():
            if fmt.detect(path):
                return _Source(fmt.name, fmt)
        expected = "; ".join(fmt.summary for fmt in file_formats())
        raise TaskFormatError(f"unknown task file type (expected {expected})", location=str(path))
    dir_fmt = task_dir_format(path)
    if dir_fmt is not None:
        return _Source(dir_fmt.name, dir_fmt)
    members = _collection_members(path)
    if members:
        return _Source(COLLECTION, members=members)
    markers = " or ".join(fmt.marker for fmt in directory_formats())
    raise TaskFormatError(f"not a task source: no {markers} here or in any subdirectory", location=str(path))


def detect_source_kind(path: str | Path) -> str:
    """The registered format name of ``path`` (``csv``, ``parquet``, ``tb``, ``harbor``) or ``collection``;
    raises TaskFormatError otherwise."""
    return _resolve_source(Path(path)).kind


def collect_tasks(
    path: str | Path, *, workers: int = 4, progress: ProgressCallback | None = None
) -> tuple[list[Task], list[TaskFormatError]]:
    """Every good task of ``path`` and one error per bad row / task directory, in source order.

    Rows and directories are parsed in a thread pool of ``workers``; ``progress(done, total, "read")``
    is called after each. Problems of the whole source (missing, unknown type, no CSV header)
    raise :class:`TaskFormatError`.
    """
    path = Path(path)
    source = _resolve_source(path)
    workers = max(1, workers)
    if source.fmt is not None:
        tasks, errors = source.fmt.read(path, workers=workers, progress=progress)
    else:
        def work(member: tuple[Path, DirectoryFormat | TaskFormatError]) -> Task | TaskFormatError:
            task_dir, fmt = member
            return fmt if isinstance(fmt, TaskFormatError) else read_task_dir(fmt, task_dir)

        tasks, errors = split_outcomes(map_in_pool(work, source.members or [], workers, progress))
    for task in tasks:
        warn_unweighted_tests(task, str(path))
    return tasks, errors


def load_tasks(path: str | Path, *, strict: bool = True, workers: int = 4) -> list[Task]:
    """All tasks of ``path`` (CSV, parquet, terminal-bench or Harbor dir, or a directory of task dirs).

    With ``strict`` (the default) any bad row or task directory raises :class:`TaskFormatError`
    listing every problem; with ``strict=False`` the good tasks are returned and each bad one is
    logged as a warning.
    """
    tasks, errors = collect_tasks(path, workers=workers)
    if errors:
        if strict:
            details = "\n".join(f"  - {error}" for error in errors)
            raise TaskFormatError(f"{len(errors)} bad task(s):\n{details}", location=str(path))
        for error in errors:
            logger.warning("skipping bad task: %s", error)
    return tasks
