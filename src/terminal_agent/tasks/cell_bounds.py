"""Size bounds of one task's serialized cells (CSV cells, parquet ``extra_info`` values), checked before parsing.

A task's decoded files are bounded by the model (:data:`~terminal_agent.tasks.model.MAX_FILE_BYTES` per file,
:data:`~terminal_agent.tasks.model.MAX_TASK_BYTES` per file map); these bounds stop a hostile row from making a
reader decode (base64, JSON) far more than any valid task could hold. A row over a bound is a bad row: its error
names the column, the others go on.
"""

from __future__ import annotations

from terminal_agent.tasks.model import MAX_FILE_BYTES, MAX_FILES_PER_TASK, MAX_TASK_BYTES

MAX_TEXT_CELL_CHARS = MAX_FILE_BYTES
"""Longest text cell (instruction, Dockerfile, test source, solution, metadata JSON ...): one file's worth."""
MAX_FILE_MAP_CELL_CHARS = (MAX_TASK_BYTES * 4) // 3 + 64 * MAX_FILES_PER_TASK + 1024 * 1024
"""Longest file-map cell (JSON of path -> text or base64): a full task of binary files, base64-encoded, with
room for the JSON around each of the most files a task may carry."""


def cell_problem(column: str, text: str, *, file_map: bool) -> str | None:
    """Why ``text`` is too long for ``column`` (a message naming the bound), or None when it fits."""
    bound = MAX_FILE_MAP_CELL_CHARS if file_map else MAX_TEXT_CELL_CHARS
    if len(text) > bound:
        return (f"{column} is {len(text)} characters, more than the {bound} a task's {column} may take "
                "(see the task size bounds in docs/tasks.md)")
    return None
