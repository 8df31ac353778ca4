"""Load tasks from any supported source, detecting its format.

Sources: a CSV file (``latest_verified.csv`` format), a parquet file (rLLM/verl rows), a
terminal-bench task directory (``task.yaml``), a Harbor task directory (``task.toml``), or a
directory whose subdirectories are task directories of either kind.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.model import Task, warn_unweighted_tests

logger = logging.getLogger(__name__)

#: ``progress(done, total, phase)`` - called after each task of a phase (``read`` / ``write``).
ProgressCallback = Callable[[int, int, str], None]


def detect_source_kind(path: str | Path) -> str:
    """``csv``, ``parquet``, ``tb``, ``harbor`` or ``collection``; raises TaskFormatError otherwise."""
    from terminal_agent.tasks.harbor import is_harbor_task_dir
    from terminal_agent.tasks.terminal_bench import is_tb_task_dir

    path = Path(path)
    if not path.exists():
        raise TaskFormatError("no such file or directory", location=str(path))
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix == ".csv":
            return "csv"
        if suffix in (".parquet", ".pq"):
            return "parquet"
        with path.open("rb") as handle:
            if handle.read(4) == b"PAR1":
                return "parquet"
        raise TaskFormatError("unknown task file type (expected .csv or .parquet)", location=str(path))
    if is_tb_task_dir(path):
        return "tb"
    if is_harbor_task_dir(path):
        return "harbor"
    if any(is_tb_task_dir(child) or is_harbor_task_dir(child) for child in path.iterdir() if child.is_dir()):
        return "collection"
    raise TaskFormatError(
        "not a task source: no task.yaml or task.toml here or in any subdirectory", location=str(path)
    )


def _read_task_dir(path: Path) -> Task:
    from terminal_agent.tasks.harbor import is_harbor_task_dir, read_harbor_task
    from terminal_agent.tasks.terminal_bench import is_tb_task_dir, read_tb_task

    if is_tb_task_dir(path):
        return read_tb_task(path)
    if is_harbor_task_dir(path):
        return read_harbor_task(path)
    raise TaskFormatError("not a task directory (no task.yaml or task.toml)", location=str(path))


def collect_tasks(
    path: str | Path, *, workers: int = 4, progress: ProgressCallback | None = None
) -> tuple[list[Task], list[TaskFormatError]]:
    """Every good task of ``path`` and one error per bad row / task directory, in source order.

    Rows and directories are parsed in a thread pool of ``workers``; ``progress(done, total, "read")``
    is called after each. Problems of the whole source (missing, unknown type, no CSV header)
    raise :class:`TaskFormatError`.
    """
    from terminal_agent.tasks import csv_format
    from terminal_agent.tasks.parquet_rows import read_parquet_with_errors

    path = Path(path)
    kind = detect_source_kind(path)
    if kind == "parquet":
        tasks, errors = read_parquet_with_errors(path)
        if progress:
            progress(len(tasks) + len(errors), len(tasks) + len(errors), "read")
        return tasks, errors

    if kind == "csv":
        _, rows = csv_format.iter_csv_rows(path)
        items: list = rows

        def work(row):  # noqa: ANN001, ANN202 - one row
            return csv_format.parse_csv_row(row, path.name)
    else:
        items = [path] if kind in ("tb", "harbor") else sorted(
            child for child in path.iterdir() if child.is_dir() and not child.name.startswith(".")
            and ((child / "task.yaml").is_file() or (child / "task.toml").is_file())
        )

        def work(task_dir):  # noqa: ANN001, ANN202 - one directory
            try:
                return _read_task_dir(task_dir)
            except TaskFormatError as exc:
                return exc

    outcomes = []
    total = len(items)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for done, outcome in enumerate(pool.map(work, items), start=1):
            outcomes.append(outcome)
            if progress:
                progress(done, total, "read")

    if kind == "csv":
        paired = csv_format.reject_duplicate_ids(list(zip(items, outcomes)), path.name)
        outcomes = [outcome for _, outcome in paired]
    tasks = [outcome for outcome in outcomes if isinstance(outcome, Task)]
    errors = [outcome for outcome in outcomes if not isinstance(outcome, Task)]
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
