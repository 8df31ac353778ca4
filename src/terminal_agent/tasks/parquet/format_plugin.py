"""The ``parquet`` entry of :data:`~terminal_agent.tasks.formats.TASK_FORMATS`: rLLM / verl training rows.

Reading and writing the rows is :mod:`terminal_agent.tasks.parquet.rows`; this module only fits it to the
:class:`~terminal_agent.tasks.formats.TaskFormat` signature. It is imported on the registry's first ``get``.
"""

from __future__ import annotations

from pathlib import Path

import terminal_agent.tasks.parquet.rows as parquet_rows
from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.formats import FileFormat, ProgressCallback
from terminal_agent.tasks.model import Task


class ParquetFormat(FileFormat):
    """rLLM / verl training rows (:mod:`~terminal_agent.tasks.parquet.rows`)."""

    name = "parquet"
    summary = "parquet file of rLLM/verl rows (.parquet, .pq)"
    detection_order = 20
    suffixes = (".parquet", ".pq")

    def detect(self, path: Path) -> bool:
        if super().detect(path):
            return True
        if not path.is_file():
            return False
        with path.open("rb") as handle:
            return handle.read(4) == b"PAR1"

    def read(
        self, path: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> tuple[list[Task], list[TaskFormatError]]:
        tasks, errors = parquet_rows.read_parquet_with_errors(path)
        if progress:
            progress(len(tasks) + len(errors), len(tasks) + len(errors), "read")
        return tasks, errors

    def write(
        self, tasks: list[Task], dst: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> Path:
        self.check_output(dst)
        parquet_rows.write_parquet(tasks, dst)
        if progress:
            progress(len(tasks), len(tasks), "write")
        return dst


FORMAT = ParquetFormat()
"""The registry entry: :mod:`terminal_agent.tasks.formats` registers it by this path."""
