"""One CSV row <-> one Task: the columns, how each cell is parsed, and errors that name the column.

Columns read and written::

    task_id, difficulty, title, use_case_category, prompt, category, tags (``|``-separated),
    dockerfile, test_functions (the pytest source), test_weights (JSON object), additional_files
    (JSON file map), created_at, updated_at

plus columns of ours: ``solution`` (bash), ``limits`` (JSON object of the non-default
:class:`~terminal_agent.tasks.model.TaskLimits` fields), ``test_support_files`` (JSON file map) and
``metadata`` (JSON object of metadata that has no column of its own), and the optional columns
``docker_image`` (text), ``env`` (JSON object), ``solution_files`` (JSON file map), ``verifier``
(JSON object of the non-default :class:`~terminal_agent.tasks.model.VerifierSpec` fields) and ``guards``
(JSON object of the :class:`~terminal_agent.tasks.model.TestGuards`: ``tests``, ``on_failure``, ``cap``),
written only when some task of the file uses them - so a file of tasks without them (``dataset/latest_verified.csv``)
is written exactly as before. Every other column the user had is kept in ``Task.metadata`` under its
own name and written back as a column, so nothing is lost.

A *file map* is :func:`~terminal_agent.tasks.model.encode_file_map`'s JSON: ``{"path": "text"}`` for a
UTF-8 text file, ``{"path": {"base64": "..."}}`` for any other bytes.

Reading the file (header checks, line numbers) and writing it are in
:mod:`terminal_agent.tasks.csv.format`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from terminal_agent.errors import UNTRUSTED_CONTENT_ERRORS, TaskFormatError
from terminal_agent.tasks.cell_bounds import cell_problem
from terminal_agent.tasks.model import (
    FileContent,
    Task,
    TaskLimits,
    decode_file_map,
    encode_file_map,
    find_test_functions,
)
from terminal_agent.tasks.negative_solution_fields import negative_solutions_data, parse_negative_solutions

#: Columns of the original dataset, in its order.
STANDARD_COLUMNS = [
    "task_id",
    "difficulty",
    "title",
    "use_case_category",
    "prompt",
    "category",
    "tags",
    "dockerfile",
    "test_functions",
    "test_weights",
    "additional_files",
    "created_at",
    "updated_at",
]
#: Columns added by terminal-agent.
OUR_COLUMNS = ["solution", "limits", "test_support_files", "metadata"]
#: Columns of ours written only when a task of the file has a value for them (after ``OUR_COLUMNS``).
OPTIONAL_COLUMNS = ["docker_image", "env", "solution_files", "verifier", "guards", "negative_solutions"]
#: Columns holding a file map (JSON: path -> text, or path -> {"base64": ...}).
FILE_MAP_COLUMNS = ("additional_files", "test_support_files", "solution_files")
#: Columns that must be present in the header.
REQUIRED_COLUMNS = ["task_id", "prompt", "dockerfile", "test_functions", "test_weights"]
#: Columns stored in ``Task.metadata`` under their own names (they have no Task field).
METADATA_COLUMNS = ["created_at", "updated_at"]

#: Task field -> CSV column, used to name the field of a validation error.
_FIELD_TO_COLUMN = {
    "task_id": "task_id",
    "instruction": "prompt",
    "title": "title",
    "difficulty": "difficulty",
    "category": "category",
    "use_case_category": "use_case_category",
    "tags": "tags",
    "dockerfile": "dockerfile",
    "files": "additional_files",
    "test_source": "test_functions",
    "test_support_files": "test_support_files",
    "test_weights": "test_weights",
    "solution": "solution",
    "limits": "limits",
    "metadata": "metadata",
    "docker_image": "docker_image",
    "env": "env",
    "solution_files": "solution_files",
    "verifier": "verifier",
    "guards": "guards",
    "negative_solutions": "negative_solutions",
}


@dataclass
class CsvRow:
    """One raw record of the CSV and the file line it starts on."""

    line: int
    values: dict[str, str]
    problem: str | None = None
    """Why the record cannot be read at all (bytes that are not UTF-8); the row is then a bad row."""


#: Key of ``CsvRow.values`` that counts the cells past the header; cannot clash with a real column name.
EXTRA_CELLS_KEY = "\0extra-cells"


class _RowError(Exception):
    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field_name = field_name
        self.message = message


# --- one row -> one task ----------------------------------------------------------------------------
def _parse_json(column: str, text: str, default: Any) -> Any:
    if not text.strip():
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _RowError(column, f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise _RowError(column, "is JSON nested too deeply to read") from None


def _parse_tags(text: str) -> list[str]:
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        tags = _parse_json("tags", stripped, [])
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            raise _RowError("tags", "a JSON tag list must be a list of strings")
        return tags
    return [tag.strip() for tag in stripped.split("|") if tag.strip()]


def _parse_weights(text: str, test_source: str) -> dict[str, float]:
    weights = _parse_json("test_weights", text, None)
    if weights is None:
        raise _RowError("test_weights", "is empty (a JSON object test name -> weight is required)")
    if isinstance(weights, list):
        # a list of weights in the order of the test functions
        try:
            names = find_test_functions(test_source)
        except ValueError as exc:
            raise _RowError("test_functions", str(exc)) from None
        if len(weights) != len(names):
            raise _RowError(
                "test_weights", f"a weight list must have one weight per test function ({len(names)}), got {len(weights)}"
            )
        weights = dict(zip(names, weights))
    if not isinstance(weights, dict):
        raise _RowError("test_weights", "must be a JSON object test name -> weight")
    result: dict[str, float] = {}
    for name, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise _RowError("test_weights", f"weight of {name!r} is not a number: {weight!r}")
        result[str(name)] = float(weight)
    return result


def _parse_files(column: str, text: str) -> dict[str, FileContent]:
    files = _parse_json(column, text, {})
    if isinstance(files, list):
        # [{"path": ..., "content": ...}, ...]
        converted: dict[str, object] = {}
        for item in files:
            if not isinstance(item, dict) or "path" not in item or "content" not in item:
                raise _RowError(column, "a file list must hold objects with 'path' and 'content'")
            converted[str(item["path"])] = item["content"]
        files = converted
    if not isinstance(files, dict):
        raise _RowError(column, "must be a JSON object path -> file content")
    try:
        return decode_file_map(files, column)
    except ValueError as exc:
        raise _RowError(column, str(exc).removeprefix(f"{column}: ")) from None


def _parse_object(column: str, text: str) -> dict[str, Any]:
    value = _parse_json(column, text, {})
    if not isinstance(value, dict):
        raise _RowError(column, "must be a JSON object")
    return value


def _column_of_validation_error(error: ErrorDetails) -> str:
    location = error.get("loc") or ()
    if location:
        return _FIELD_TO_COLUMN.get(str(location[0]), str(location[0]))
    message = str(error.get("msg", ""))
    if "test_source" in message or "defines no test functions" in message:
        return "test_functions"
    if message.removeprefix("Value error, ").startswith("guard"):
        return "guards"
    return "test_weights"


def task_from_csv_values(values: dict[str, str]) -> Task:
    """Build a Task from one row (column -> text). Raises ``_RowError`` naming the bad column."""
    extra_cells = values.get(EXTRA_CELLS_KEY)
    if extra_cells:
        raise _RowError("row", f"has {extra_cells} more cell(s) than the header")
    for column, text in values.items():
        problem = cell_problem(column, text, file_map=column in FILE_MAP_COLUMNS)
        if problem:
            raise _RowError(column, problem)
    test_source = values.get("test_functions", "")
    limits_data = _parse_json("limits", values.get("limits", ""), {})
    if not isinstance(limits_data, dict):
        raise _RowError("limits", "must be a JSON object")
    metadata = _parse_json("metadata", values.get("metadata", ""), {})
    if not isinstance(metadata, dict):
        raise _RowError("metadata", "must be a JSON object")
    known = set(STANDARD_COLUMNS) | set(OUR_COLUMNS) | set(OPTIONAL_COLUMNS)
    for column, text in values.items():
        if (column not in known or column in METADATA_COLUMNS) and text != "":
            metadata[column] = text
    solution = values.get("solution", "")
    data: dict[str, Any] = {
        "task_id": values.get("task_id", "").strip(),
        "instruction": values.get("prompt", ""),
        "title": values.get("title", ""),
        "difficulty": values.get("difficulty", "").strip() or "medium",
        "category": values.get("category", ""),
        "use_case_category": values.get("use_case_category", ""),
        "tags": _parse_tags(values.get("tags", "")),
        "dockerfile": values.get("dockerfile", ""),
        "files": _parse_files("additional_files", values.get("additional_files", "")),
        "test_source": test_source,
        "test_support_files": _parse_files("test_support_files", values.get("test_support_files", "")),
        "test_weights": _parse_weights(values.get("test_weights", ""), test_source),
        "solution": solution if solution.strip() else None,
        "limits": limits_data,
        "metadata": metadata,
    }
    docker_image = values.get("docker_image", "")
    if docker_image.strip():
        data["docker_image"] = docker_image
    if values.get("env", "").strip():
        data["env"] = _parse_object("env", values["env"])
    if values.get("solution_files", "").strip():
        data["solution_files"] = _parse_files("solution_files", values["solution_files"])
    if values.get("verifier", "").strip():
        data["verifier"] = _parse_object("verifier", values["verifier"])
    if values.get("guards", "").strip():
        data["guards"] = _parse_object("guards", values["guards"])
    try:
        negatives = parse_negative_solutions(values.get("negative_solutions"), None)
    except TaskFormatError as exc:
        raise _RowError("negative_solutions", exc.reason) from None
    if negatives is not None:
        data["negative_solutions"] = negatives
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first.get("msg", exc)).removeprefix("Value error, ")
        location = first.get("loc") or ()
        if location:  # the model names its own field ("files: ..."); the error names the column instead
            message = message.removeprefix(f"{location[0]}: ")
        raise _RowError(_column_of_validation_error(first), message) from None


def parse_csv_row(row: CsvRow, file_name: str) -> Task | TaskFormatError:
    """One row -> Task, or the TaskFormatError (with ``file:line`` and field) that says why not."""
    if row.problem:
        return TaskFormatError(row.problem, location=f"{file_name}:{row.line}", field="row")
    try:
        return task_from_csv_values(row.values)
    except _RowError as exc:
        task_id = row.values.get("task_id", "").strip()
        suffix = f" (task_id {task_id!r})" if task_id and exc.field_name != "task_id" else ""
        return TaskFormatError(exc.message + suffix, location=f"{file_name}:{row.line}", field=exc.field_name)
    except UNTRUSTED_CONTENT_ERRORS as exc:
        # rows are untrusted: whatever odd cell trips a parser past the checks above spoils this row only
        return TaskFormatError(f"cannot read the row: {type(exc).__name__}: {exc}", location=f"{file_name}:{row.line}",
                               field="row")


def reject_duplicate_ids(
    parsed: list[tuple[CsvRow, Task | TaskFormatError]], file_name: str
) -> list[tuple[CsvRow, Task | TaskFormatError]]:
    """Turn every repeat of an already seen task_id into an error (the first occurrence stays).

    A row counts as an occurrence of its ``task_id`` cell even when it failed to parse, so a repeat
    right after a bad row is still an error (fixing the first row would otherwise make them clash).
    """
    first_line: dict[str, int] = {}
    result: list[tuple[CsvRow, Task | TaskFormatError]] = []
    for row, outcome in parsed:
        task_id = outcome.task_id if isinstance(outcome, Task) else row.values.get("task_id", "").strip()
        if task_id and task_id in first_line:
            if isinstance(outcome, Task):
                outcome = TaskFormatError(
                    f"duplicate task_id {task_id!r} (first used on line {first_line[task_id]})",
                    location=f"{file_name}:{row.line}",
                    field="task_id",
                )
        elif task_id:
            first_line[task_id] = row.line
        result.append((row, outcome))
    return result


# --- one task -> one row ---------------------------------------------------------------------------
def _format_tags(tags: list[str]) -> str:
    simple = all(tag and tag == tag.strip() and "|" not in tag for tag in tags) and not (
        tags and tags[0].startswith("[")
    )
    if simple:
        return "|".join(tags)
    return json.dumps(tags, ensure_ascii=False)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def task_to_csv_values(task: Task) -> dict[str, str]:
    """One task as column -> text (standard columns, ours, and one column per string metadata key)."""
    default_limits = TaskLimits()
    limits = {
        name: value for name, value in task.limits.model_dump().items() if getattr(default_limits, name) != value
    }
    values: dict[str, str] = {
        "task_id": task.task_id,
        "difficulty": task.difficulty,
        "title": task.title,
        "use_case_category": task.use_case_category,
        "prompt": task.instruction,
        "category": task.category,
        "tags": _format_tags(task.tags),
        "dockerfile": task.dockerfile,
        "test_functions": task.test_source,
        "test_weights": _json(task.test_weights),
        "additional_files": _json(encode_file_map(task.files)),
        "created_at": "",
        "updated_at": "",
        "solution": task.solution if task.solution is not None else "",
        "limits": _json(limits) if limits else "",
        "test_support_files": _json(encode_file_map(task.test_support_files)) if task.test_support_files else "",
        "metadata": "",
    }
    # optional columns: present only when set, so files of tasks without them keep their old header
    if task.docker_image is not None:
        values["docker_image"] = task.docker_image
    if task.env:
        values["env"] = _json(task.env)
    if task.solution_files:
        values["solution_files"] = _json(encode_file_map(task.solution_files))
    verifier = task.verifier.model_dump(mode="json", exclude_defaults=True)
    if verifier:
        values["verifier"] = _json(verifier)
    if task.guards is not None:
        values["guards"] = _json(task.guards.model_dump(mode="json"))
    if task.negative_solutions:
        values["negative_solutions"] = _json(negative_solutions_data(task.negative_solutions))
    reserved = set(STANDARD_COLUMNS) | set(OUR_COLUMNS) | set(OPTIONAL_COLUMNS)
    leftover: dict[str, Any] = {}
    for key, value in task.metadata.items():
        own_column = isinstance(value, str) and value != "" and (key not in reserved or key in METADATA_COLUMNS)
        if own_column and "\0" not in key and key.strip() == key and key:
            values[key] = value
        else:
            leftover[key] = value
    if leftover:
        values["metadata"] = _json(leftover)
    return values
