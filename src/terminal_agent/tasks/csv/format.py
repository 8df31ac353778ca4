"""The CSV format of ``dataset/latest_verified.csv``: one task per row.

The columns and how each cell becomes a Task field (and back) are in
:mod:`terminal_agent.tasks.csv.rows`; this module reads and writes whole files.

Reading never stops at a bad row: :func:`read_tasks_csv` returns the good tasks and one
:class:`~terminal_agent.errors.TaskFormatError` per bad row, naming its line and field.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.atomic_output import atomic_write_text
from terminal_agent.tasks.csv.rows import (
    EXTRA_CELLS_KEY,
    METADATA_COLUMNS,
    OPTIONAL_COLUMNS,
    OUR_COLUMNS,
    REQUIRED_COLUMNS,
    STANDARD_COLUMNS,
    CsvRow,
    parse_csv_row,
    reject_duplicate_ids,
    task_from_csv_values,
    task_to_csv_values,
)
from terminal_agent.tasks.model import Task, warn_unweighted_tests

logger = logging.getLogger(__name__)

#: The row-level names stay importable from here, where they lived first.
__all__ = [
    "EXTRA_CELLS_KEY",
    "METADATA_COLUMNS",
    "OPTIONAL_COLUMNS",
    "OUR_COLUMNS",
    "REQUIRED_COLUMNS",
    "STANDARD_COLUMNS",
    "CsvReadResult",
    "CsvRow",
    "iter_csv_rows",
    "parse_csv_row",
    "read_tasks_csv",
    "reject_duplicate_ids",
    "task_from_csv_values",
    "task_to_csv_values",
    "write_tasks_csv",
]


@dataclass
class CsvReadResult:
    """What :func:`read_tasks_csv` found: the good tasks and one error per bad row."""

    tasks: list[Task] = field(default_factory=list)
    errors: list[TaskFormatError] = field(default_factory=list)


def _allow_large_fields() -> None:
    # Dockerfiles, tests and extra files easily exceed the csv module's 128 KiB default.
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 10


_UNDECODABLE = re.compile("[\udc80-\udcff]")


def _undecodable_lines(text: str) -> list[tuple[int, int, int]]:
    """(line, column, byte) of every byte that is not UTF-8 (decoded with ``surrogateescape``)."""
    found = []
    for match in _UNDECODABLE.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        found.append((text.count("\n", 0, match.start()) + 1, match.start() - line_start + 1, ord(match.group()) - 0xDC00))
    return found


def _decode_problem(found: list[tuple[int, int, int]], first: int, last: int) -> str | None:
    for line, column, byte in found:
        if first <= line <= last:
            return f"byte 0x{byte:02x} on line {line} (column {column}) is not valid UTF-8; save the file as UTF-8"
    return None


def iter_csv_rows(path: str | Path) -> tuple[list[str], list[CsvRow]]:
    """Header and raw records of ``path`` with the line each record starts on (1-based).

    A record holding bytes that are not UTF-8 comes back with its ``problem`` set (naming the real
    line of the byte), so that row is reported as bad and the others go on.

    Raises :class:`TaskFormatError` when the file cannot be read as CSV or lacks a required column.
    """
    path = Path(path)
    _allow_large_fields()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TaskFormatError(f"cannot open CSV file: {exc.strerror}", location=str(path)) from None
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="surrogateescape")
    undecodable = _undecodable_lines(text)
    rows: list[CsvRow] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise TaskFormatError("CSV file is empty (no header)", location=str(path)) from None
    except csv.Error as exc:
        raise TaskFormatError(f"header is not valid CSV: {exc}", location=f"{path.name}:1") from None
    problem = _decode_problem(undecodable, 1, reader.line_num)
    if problem:
        raise TaskFormatError(f"header: {problem}", location=f"{path.name}:1")
    header = [name.strip() for name in header]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise TaskFormatError(
            f"CSV header lacks required column(s): {', '.join(missing)}", location=f"{path.name}:1"
        )
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise TaskFormatError(f"CSV header repeats column(s): {', '.join(duplicates)}", location=f"{path.name}:1")
    previous_end = reader.line_num
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise TaskFormatError(f"not valid CSV: {exc}", location=f"{path.name}:{previous_end + 1}") from None
        start_line = previous_end + 1
        previous_end = reader.line_num
        if not any(cell.strip() for cell in record):
            continue  # blank line
        values = {name: (record[index] if index < len(record) else "") for index, name in enumerate(header)}
        if len(record) > len(header):
            values[EXTRA_CELLS_KEY] = str(len(record) - len(header))
        rows.append(CsvRow(line=start_line, values=values, problem=_decode_problem(undecodable, start_line, previous_end)))
    return header, rows


def read_tasks_csv(path: str | Path) -> CsvReadResult:
    """Read every row of ``path``; bad rows become errors, good rows tasks (file order).

    Raises :class:`TaskFormatError` only for problems of the whole file (missing, no header,
    required column absent, broken quoting).
    """
    path = Path(path)
    _, rows = iter_csv_rows(path)
    parsed = [(row, parse_csv_row(row, path.name)) for row in rows]
    result = CsvReadResult()
    for _, outcome in reject_duplicate_ids(parsed, path.name):
        if isinstance(outcome, Task):
            warn_unweighted_tests(outcome, path.name)
            result.tasks.append(outcome)
        else:
            result.errors.append(outcome)
    return result



# --- writing -----------------------------------------------------------------------------------
def write_tasks_csv(tasks: Iterable[Task], path: str | Path) -> Path:
    """Write ``tasks`` to ``path`` atomically (a temp file beside it, renamed at the end).

    The header is the standard columns, ours, the optional columns some task uses, then one column per
    string metadata key; binary files are base64 inside their file-map cell (see :mod:`.rows`).
    """
    path = Path(path)
    rows = [task_to_csv_values(task) for task in tasks]
    header = list(STANDARD_COLUMNS) + list(OUR_COLUMNS)
    header += [column for column in OPTIONAL_COLUMNS if any(column in row for row in rows)]
    for row in rows:
        for column in row:
            if column not in header:
                header.append(column)

    class _Lines:
        def __init__(self) -> None:
            self.parts: list[str] = []

        def write(self, text: str) -> None:
            self.parts.append(text)

    buffer = _Lines()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    for row in rows:
        writer.writerow([row.get(column, "") for column in header])
    atomic_write_text(path, "".join(buffer.parts))
    logger.debug("wrote %d task(s) to %s", len(rows), path)
    return path
