"""The ``csv`` entry of :data:`~terminal_agent.tasks.formats.TASK_FORMATS`: ``dataset/latest_verified.csv``.

Reading and writing whole files is :mod:`terminal_agent.tasks.csv.format`; this module only fits it to the
:class:`~terminal_agent.tasks.formats.TaskFormat` signature. It is imported on the registry's first ``get``.
"""

from __future__ import annotations

from pathlib import Path

import terminal_agent.tasks.csv.format as csv_format
from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.formats import FileFormat, ProgressCallback, map_in_pool, split_outcomes
from terminal_agent.tasks.model import Task


class CsvFormat(FileFormat):
    """``dataset/latest_verified.csv``: one task per row (:mod:`~terminal_agent.tasks.csv.format`)."""

    name = "csv"
    summary = "CSV file, one task per row (.csv)"
    detection_order = 10
    suffixes = (".csv",)

    def read(
        self, path: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> tuple[list[Task], list[TaskFormatError]]:
        _, rows = csv_format.iter_csv_rows(path)
        outcomes = map_in_pool(lambda row: csv_format.parse_csv_row(row, path.name), rows, workers, progress)
        paired = csv_format.reject_duplicate_ids(list(zip(rows, outcomes)), path.name)
        return split_outcomes(outcome for _, outcome in paired)

    def write(
        self, tasks: list[Task], dst: Path, *, workers: int = 4, progress: ProgressCallback | None = None
    ) -> Path:
        self.check_output(dst)
        csv_format.write_tasks_csv(tasks, dst)
        if progress:
            progress(len(tasks), len(tasks), "write")
        return dst


FORMAT = CsvFormat()
"""The registry entry: :mod:`terminal_agent.tasks.formats` registers it by this path."""
