"""Convert tasks between formats in parallel, publishing the output atomically.

The library part of ``terminal-agent tasks convert`` and the ``dataset/`` scripts: read every
task of a source (bad ones become errors, good ones go on), write them in a thread pool into a
temp file or directory beside the target, and rename it into place only at the end - an existing
output is never left half-overwritten. Progress goes to an optional callback; nothing is printed.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from terminal_agent.errors import ConfigError, TaskFormatError
from terminal_agent.tasks.atomic_output import atomic_output_dir
from terminal_agent.tasks.loading import ProgressCallback
from terminal_agent.tasks.model import Task

logger = logging.getLogger(__name__)

OutputFormat = Literal["tb", "harbor", "csv", "parquet"]
OUTPUT_FORMATS: tuple[str, ...] = ("tb", "harbor", "csv", "parquet")

# --- conversion -----------------------------------------------------------------------------------
@dataclass
class ConversionReport:
    """Outcome of :func:`convert_tasks`."""

    tasks: list[Task] = field(default_factory=list)
    """Tasks read successfully (and written, when ``output`` is set)."""
    errors: list[TaskFormatError] = field(default_factory=list)
    """One error per bad row / task directory."""
    output: Path | None = None
    """Where the output was published; ``None`` when nothing was written."""

    @property
    def ok(self) -> bool:
        """True when every task of the source was good and the output was written."""
        return not self.errors and self.output is not None


def _check_replaceable_dir(path: Path) -> None:
    if not path.exists():
        return
    if not path.is_dir():
        raise ConfigError(f"output {path} exists and is not a directory")
    for entry in path.iterdir():
        if entry.name.startswith("."):
            continue
        is_task_dir = entry.is_dir() and ((entry / "task.yaml").is_file() or (entry / "task.toml").is_file())
        if not is_task_dir:
            raise ConfigError(
                f"refusing to replace {path}: it holds {entry.name!r}, which is not a task directory "
                "(choose an empty or new output directory)"
            )


def write_tasks(
    tasks: list[Task],
    dst: str | Path,
    to: str,
    *,
    workers: int = 4,
    progress: ProgressCallback | None = None,
) -> Path:
    """Write ``tasks`` to ``dst`` in format ``to``, atomically; returns ``dst``.

    ``tb`` / ``harbor``: ``dst`` is a directory holding one directory per task (an existing one
    is replaced as a whole, but only if it holds task directories alone). ``csv`` / ``parquet``:
    ``dst`` is a file.
    """
    from terminal_agent.tasks.csv_format import write_tasks_csv
    from terminal_agent.tasks.harbor import write_harbor_task
    from terminal_agent.tasks.parquet_rows import write_parquet
    from terminal_agent.tasks.terminal_bench import write_tb_task

    dst = Path(dst)
    total = len(tasks)
    if to in ("tb", "harbor"):
        writer = write_tb_task if to == "tb" else write_harbor_task
        _check_replaceable_dir(dst)
        with atomic_output_dir(dst) as temp_dir:
            done = 0
            with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
                for _ in pool.map(lambda task: writer(task, temp_dir), tasks):
                    done += 1
                    if progress:
                        progress(done, total, "write")
        return dst
    if dst.is_dir():
        raise ConfigError(f"output {dst} is a directory; --to {to} writes one file")
    if to == "csv":
        write_tasks_csv(tasks, dst)
    elif to == "parquet":
        write_parquet(tasks, dst)
    else:
        raise ConfigError(f"unknown output format {to!r}; choose one of {', '.join(OUTPUT_FORMATS)}")
    if progress:
        progress(total, total, "write")
    return dst


def convert_tasks(
    src: str | Path,
    dst: str | Path,
    to: str,
    *,
    workers: int = 4,
    strict: bool = False,
    progress: ProgressCallback | None = None,
) -> ConversionReport:
    """Read every task of ``src`` (any format :func:`~terminal_agent.tasks.loading.load_tasks`
    knows) and write the good ones to ``dst`` in format ``to``.

    Bad rows / task directories are collected in ``report.errors`` and the good ones are still
    written - unless ``strict``, where any bad input means nothing is written and an existing
    ``dst`` stays as it was. A failure while writing leaves ``dst`` untouched too.
    """
    from terminal_agent.tasks.loading import collect_tasks

    if to not in OUTPUT_FORMATS:
        raise ConfigError(f"unknown output format {to!r}; choose one of {', '.join(OUTPUT_FORMATS)}")
    tasks, errors = collect_tasks(src, workers=workers, progress=progress)
    report = ConversionReport(tasks=tasks, errors=errors)
    for error in errors:
        logger.debug("skipped: %s", error)
    writable, layout_errors = split_by_layout(tasks, to)
    report.tasks, report.errors = writable, errors + layout_errors
    if report.errors and strict:
        logger.debug("strict: %d bad task(s), nothing written", len(report.errors))
        return report
    if not writable:
        logger.debug("no good task in %s, nothing written", src)
        return report
    report.output = write_tasks(writable, dst, to, workers=workers, progress=progress)
    return report


def split_by_layout(tasks: list[Task], to: str) -> tuple[list[Task], list[TaskFormatError]]:
    """The tasks that format ``to`` can hold, and one error (reason + hint) per task it cannot.

    A task whose extra files clash with a directory layout (terminal-bench keeps tests in
    ``tests/`` beside the environment's files) is a bad row like any other: reported, not written.
    """
    from terminal_agent.tasks.harbor import check_harbor_layout
    from terminal_agent.tasks.terminal_bench import check_tb_layout

    checks = {"tb": check_tb_layout, "harbor": check_harbor_layout}
    check = checks.get(to)
    if check is None:
        return list(tasks), []
    writable: list[Task] = []
    errors: list[TaskFormatError] = []
    for task in tasks:
        try:
            check(task)
        except TaskFormatError as exc:
            errors.append(exc)
        else:
            writable.append(task)
    return writable, errors


def split_tasks(tasks: list[Task], test_fraction: float, *, seed: int = 0) -> tuple[list[Task], list[Task]]:
    """Deterministic train/test split: a task's side depends only on its id and ``seed``.

    The ``round(len * test_fraction)`` tasks with the smallest hash of ``seed:task_id`` go to test
    (at least one when the fraction is positive and there are two or more tasks); order is kept.
    """
    import hashlib

    if not 0.0 <= test_fraction < 1.0:
        raise ConfigError(f"test_fraction must be in [0, 1), got {test_fraction}")
    count = round(len(tasks) * test_fraction)
    if test_fraction > 0 and len(tasks) >= 2:
        count = max(1, count)
    ranked = sorted(tasks, key=lambda task: hashlib.sha256(f"{seed}:{task.task_id}".encode()).hexdigest())
    test_ids = {task.task_id for task in ranked[:count]}
    return [t for t in tasks if t.task_id not in test_ids], [t for t in tasks if t.task_id in test_ids]
