"""The task-format registry: one entry per format, each able to detect, read and write its sources.

>>> TASK_FORMATS.get("harbor").detect(Path("tasks/fix-stats"))  # doctest: +SKIP
True

Two kinds of format share one signature (:class:`TaskFormat`):

* **file formats** (``csv``, ``parquet``): one file holds every task; ``write`` replaces the file atomically;
* **directory formats** (``tb`` = terminal-bench v1, ``harbor``): one directory per task, recognised by a
  marker file (``task.yaml``, ``task.toml``); a source is one such directory or a *collection* (a directory of
  them, formats mixed). ``write`` fills a fresh directory of task directories and publishes it atomically.

Each format's class lives in its format package (``tasks/<package>/format_plugin.py``, beside the reader and
writer it adapts) and is registered here by one ``register_path`` line, so this module imports no format package
and a package may import it for its base class. This module holds the protocol, the registry and the helpers the
entries share (:func:`map_in_pool`, :func:`split_outcomes`, :func:`read_task_dir`).

``load_tasks`` / ``collect_tasks`` / ``detect_source_kind`` (:mod:`~terminal_agent.tasks.loading`) and
``convert_tasks`` / ``write_tasks`` / ``split_by_layout`` (:mod:`~terminal_agent.tasks.conversion`) dispatch
through :data:`TASK_FORMATS` and never name a format; the CLI's ``--to`` choices are its names.

Hostile sources (downloaded datasets) are expected: directory readers never leave the task folder
(:mod:`~terminal_agent.tasks.task_dirs`), a symlinked task folder inside a collection is refused, and writers
refuse an output that is a symlink and never follow one.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ClassVar, TypeVar

from terminal_agent.errors import UNTRUSTED_CONTENT_ERRORS, ConfigError, TaskFormatError
from terminal_agent.registry import Registry
from terminal_agent.tasks.atomic_output import atomic_output_dir
from terminal_agent.tasks.model import TASK_ID_PATTERN, Task

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

#: ``progress(done, total, phase)`` - called after each task of a phase (``read`` / ``write``).
ProgressCallback = Callable[[int, int, str], None]


class TaskFormat(ABC):
    """One task format. Every entry of :data:`TASK_FORMATS` has these members."""

    name: ClassVar[str]
    """Registry name (``--to`` value)."""
    summary: ClassVar[str]
    """One line for help texts and error messages."""
    is_directory: ClassVar[bool]
    """True: one directory per task (written into an output directory); False: one file for all tasks."""
    detection_order: ClassVar[int]
    """Formats are tried in this order when a source is detected (a directory with both ``task.yaml`` and
    ``task.toml`` is terminal-bench, as it always was)."""

    @abstractmethod
    def detect(self, path: Path) -> bool:
        """Whether ``path`` (an existing file or directory) is a source of this format. Cheap: a suffix, a
        marker's ``stat`` or a file's first bytes; nothing else is read."""

    @abstractmethod
    def read(
        self, path: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> tuple[list[Task], list[TaskFormatError]]:
        """The good tasks of the source ``path`` and one error per bad row / directory, in source order.

        Raises :class:`TaskFormatError` for a problem of the whole source (unreadable file, no CSV header).
        """

    @abstractmethod
    def write(
        self, tasks: list[Task], dst: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> Path:
        """Write ``tasks`` to ``dst`` atomically (an existing output stays as it was on failure); returns
        ``dst``. Raises :class:`ConfigError` for an output that cannot be replaced."""

    def check_layout(self, task: Task) -> None:
        """Raise :class:`TaskFormatError` (with a hint) when this format cannot hold ``task``."""

    def check_output(self, dst: Path) -> None:
        """Raise :class:`ConfigError` when ``dst`` is not an output this format may (re)place."""
        if dst.is_symlink():
            raise ConfigError(
                f"output {dst} is a symlink; refusing to write through it (name the real path instead)"
            )


TASK_FORMATS: Registry[TaskFormat] = Registry("task format")


# --- file formats ---------------------------------------------------------------------------------
class FileFormat(TaskFormat):
    """A format whose source is one file holding every task."""

    is_directory = False
    suffixes: ClassVar[tuple[str, ...]] = ()
    """File name suffixes (lower case) that identify the format."""

    def detect(self, path: Path) -> bool:
        return path.is_file() and path.suffix.lower() in self.suffixes

    def check_layout(self, task: Task) -> None:
        """A file format keeps the metadata as JSON: a value JSON cannot carry (a TOML datetime, a set) would
        fail the whole file's write, so it is this task's error, naming the key."""
        for key, value in task.metadata.items():
            try:
                json.dumps(value, allow_nan=True)
            except (TypeError, ValueError) as exc:
                raise TaskFormatError(
                    f"metadata[{key!r}] cannot be written as JSON ({exc}); --to {self.name} keeps metadata as JSON",
                    location=task.task_id, field="metadata",
                ) from None

    def check_output(self, dst: Path) -> None:
        super().check_output(dst)
        if dst.is_dir():
            raise ConfigError(f"output {dst} is a directory; --to {self.name} writes one file")


# --- directory formats ----------------------------------------------------------------------------
class DirectoryFormat(TaskFormat):
    """A format that keeps each task in a directory of its own, recognised by a marker file."""

    is_directory = True
    marker: ClassVar[str]
    """File whose presence makes a directory a task directory of this format."""

    @abstractmethod
    def read_task(self, task_dir: Path) -> Task:
        """The task of one task directory; :class:`TaskFormatError` naming the directory and field."""

    @abstractmethod
    def write_task(self, task: Task, parent_dir: Path) -> Path:
        """Write ``task`` as ``parent_dir/<task_id>/``; returns that path."""

    def detect(self, path: Path) -> bool:
        return (path / self.marker).is_file()

    def read(
        self, path: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> tuple[list[Task], list[TaskFormatError]]:
        outcome = read_task_dir(self, path)
        if progress:
            progress(1, 1, "read")
        return split_outcomes([outcome])

    def write(
        self, tasks: list[Task], dst: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> Path:
        self.check_output(dst)
        for task in tasks:
            _check_directory_name(task)
        seen: set[str] = set()
        for task in tasks:
            if task.task_id in seen:
                raise TaskFormatError("two tasks share this task_id; each needs its own directory",
                                      location=task.task_id, field="task_id")
            seen.add(task.task_id)
        with atomic_output_dir(dst) as temp_dir:
            map_in_pool(lambda task: self.write_task(task, temp_dir), tasks, workers, progress, phase="write")
        return dst

    def check_output(self, dst: Path) -> None:
        """``dst`` may be replaced only when it is new, or a real directory holding task directories alone."""
        super().check_output(dst)
        if not dst.exists():
            return
        if not dst.is_dir():
            raise ConfigError(f"output {dst} exists and is not a directory")
        for entry in dst.iterdir():
            if entry.name.startswith("."):
                continue
            if entry.is_symlink() or not entry.is_dir() or task_dir_format(entry) is None:
                what = "a symlink" if entry.is_symlink() else "not a task directory"
                raise ConfigError(
                    f"refusing to replace {dst}: it holds {entry.name!r}, which is {what} "
                    "(choose an empty or new output directory)"
                )


# --- the entries: one line per format, each living in its format package ------------------------------
# Named by path, so this module imports no format package (each imports this module for its base class) and
# no import comes back round; an entry's module is imported on the first ``TASK_FORMATS.get(name)``.
TASK_FORMATS.register_path("csv", "terminal_agent.tasks.csv.format_plugin:FORMAT")
TASK_FORMATS.register_path("parquet", "terminal_agent.tasks.parquet.format_plugin:FORMAT")
TASK_FORMATS.register_path("tb", "terminal_agent.tasks.terminal_bench.format_plugin:FORMAT")
TASK_FORMATS.register_path("harbor", "terminal_agent.tasks.harbor.format_plugin:FORMAT")


# --- lookups used by loading and conversion -------------------------------------------------------
def get_format(name: str) -> TaskFormat:
    """The registered format ``name``; :class:`ConfigError` listing the valid names otherwise."""
    return TASK_FORMATS.get(name)


def formats_in_detection_order() -> list[TaskFormat]:
    """Every registered format, in the order sources are tested against them."""
    return sorted((TASK_FORMATS.get(name) for name in TASK_FORMATS), key=lambda fmt: fmt.detection_order)


def file_formats() -> list[TaskFormat]:
    """The formats whose source is one file, in detection order."""
    return [fmt for fmt in formats_in_detection_order() if not fmt.is_directory]


def directory_formats() -> list[DirectoryFormat]:
    """The formats that keep one task per directory, in detection order."""
    return [fmt for fmt in formats_in_detection_order() if isinstance(fmt, DirectoryFormat)]


def task_dir_format(path: Path, formats: Iterable[DirectoryFormat] | None = None) -> DirectoryFormat | None:
    """The directory format ``path`` is a task directory of (first in detection order), or None."""
    for fmt in directory_formats() if formats is None else formats:
        if fmt.detect(path):
            return fmt
    return None


def read_task_dir(fmt: DirectoryFormat, task_dir: Path) -> Task | TaskFormatError:
    """``fmt.read_task(task_dir)``, or the TaskFormatError that says why not (an error for this directory only)."""
    try:
        return fmt.read_task(task_dir)
    except TaskFormatError as exc:
        return exc
    except UNTRUSTED_CONTENT_ERRORS as exc:
        # Task folders are untrusted: whatever odd content trips a reader (a vanished file, a YAML/TOML value of
        # an unexpected type, nesting deep enough to recurse) spoils this directory only, never the whole load.
        logger.debug("reading %s failed", task_dir, exc_info=True)
        return TaskFormatError(f"cannot read the task directory: {type(exc).__name__}: {exc}",
                               location=str(task_dir), field=fmt.marker)


def _check_directory_name(task: Task) -> None:
    # Task validates ids, but a Task built with model_construct() skips that: a writer must not trust it.
    if not TASK_ID_PATTERN.match(task.task_id) or task.task_id in {".", ".."}:
        raise TaskFormatError(f"task_id {task.task_id!r} is not a safe directory name", location=task.task_id,
                              field="task_id")


def map_in_pool(
    work: Callable[[T], R], items: list[T], workers: int, progress: ProgressCallback | None, phase: str = "read"
) -> list[R]:
    """``[work(item) for item in items]`` in a thread pool of ``workers`` (in order), reporting progress."""
    results: list[R] = []
    total = len(items)
    if workers <= 1 or total <= 1:
        for done, item in enumerate(items, start=1):
            results.append(work(item))
            if progress:
                progress(done, total, phase)
        return results
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for done, result in enumerate(pool.map(work, items), start=1):
            results.append(result)
            if progress:
                progress(done, total, phase)
    return results


def split_outcomes(outcomes: Iterable[Task | TaskFormatError]) -> tuple[list[Task], list[TaskFormatError]]:
    """The tasks and the errors of ``outcomes``, each in order."""
    tasks: list[Task] = []
    errors: list[TaskFormatError] = []
    for outcome in outcomes:
        if isinstance(outcome, Task):
            tasks.append(outcome)
        else:
            errors.append(outcome)
    return tasks, errors


__all__ = [
    "TASK_FORMATS",
    "DirectoryFormat",
    "FileFormat",
    "ProgressCallback",
    "TaskFormat",
    "directory_formats",
    "file_formats",
    "formats_in_detection_order",
    "get_format",
    "map_in_pool",
    "read_task_dir",
    "split_outcomes",
    "task_dir_format",
]
