"""Convert tasks between formats in parallel, publishing the output atomically.

The library part of ``terminal-agent tasks convert`` and the ``dataset/`` scripts: read every
task of a source (bad ones become errors, good ones go on), write them in a thread pool into a
temp file or directory beside the target, and rename it into place only at the end - an existing
output is never left half-overwritten. Progress goes to an optional callback; nothing is printed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from terminal_agent.errors import ConfigError, TaskFormatError
from terminal_agent.tasks.formats import TASK_FORMATS, ProgressCallback, get_format
from terminal_agent.tasks.loading import collect_tasks
from terminal_agent.tasks.model import Task

logger = logging.getLogger(__name__)

#: The names ``--to`` accepts: every registered format.
OUTPUT_FORMATS: tuple[str, ...] = tuple(TASK_FORMATS.names())

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


def write_tasks(
    tasks: list[Task],
    dst: str | Path,
    to: str,
    *,
    workers: int = 4,
    progress: ProgressCallback | None = None,
) -> Path:
    """Write ``tasks`` to ``dst`` in format ``to`` (a registered format name), atomically; returns ``dst``.

    Directory formats (``tb`` / ``harbor``): ``dst`` is a directory holding one directory per task (an
    existing one is replaced as a whole, but only if it is a real directory holding task directories
    alone). File formats (``csv`` / ``parquet``): ``dst`` is a file. An output that is a symlink is refused.
    """
    return get_format(to).write(list(tasks), Path(dst), workers=max(1, workers), progress=progress)


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
    fmt = get_format(to)  # an unknown name is a ConfigError listing the valid ones, before anything is read
    fmt.check_output(Path(dst))
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
    So is a second task with an id already seen (it would overwrite the first one's directory or
    row).
    """
    fmt = get_format(to)
    writable: list[Task] = []
    errors: list[TaskFormatError] = []
    seen: set[str] = set()
    for task in tasks:
        try:
            if task.task_id in seen:
                raise TaskFormatError("duplicate task_id: another task of the source already has it",
                                      location=task.task_id, field="task_id")
            fmt.check_layout(task)
        except TaskFormatError as exc:
            errors.append(exc)
        else:
            seen.add(task.task_id)
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
