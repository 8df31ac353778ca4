"""Parquet rows for rLLM / verl training data.

One row per task, in the shape rLLM's ``DatasetRegistry`` gives verl::

    prompt        [{"role": "user", "content": <instruction>}]   (verl tokenizes it to filter
                  over-long prompts; the agent builds the real conversation itself)
    data_source   "terminal_agent"
    ability       "terminal"
    reward_model  {"style": "rule", "ground_truth": ""}           (grading is done by the env)
    extra_info    the task as a *flat* mapping: every value a str, int, float or bool;
                  lists and mappings are JSON-encoded strings

File maps (``files``, ``test_support_files``, ``solution_files``) are the JSON of
:func:`~terminal_agent.tasks.model.encode_file_map`: text stays a string, bytes become ``{"base64": ...}``.
The verifier spec is a JSON object of its non-default fields; ``docker_image`` a string beside
``has_docker_image`` (as ``solution`` beside ``has_solution``); ``limit_storage_mb`` is 0 when the task names no disk
quota (an integer in every row, so the struct keeps one schema); ``guards`` the JSON object of the task's
:class:`~terminal_agent.tasks.model.TestGuards`, ``""`` when it has none. Rows written before these keys existed
read with their defaults.

``extra_info`` is written as a parquet struct, not as one JSON string: verl's ``RLHFDataset``
calls ``extra_info.get("index")`` on every row, which a string would break, while rLLM's trainer
takes either (it json-loads strings) and calls ``env_class.from_dict({**extra_info, **env_args})``.
:func:`task_from_flat_dict` accepts both forms and ignores keys it does not know (``index``,
``max_steps`` and other env_args).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from terminal_agent.errors import UNTRUSTED_CONTENT_ERRORS, TaskFormatError
from terminal_agent.tasks.atomic_output import atomic_output_file
from terminal_agent.tasks.cell_bounds import cell_problem
from terminal_agent.tasks.guard_fields import guards_json, parse_guards_json, task_with_guards_from_fields
from terminal_agent.tasks.model import LATE_UNSET_LIMITS, Task, TaskLimits, decode_file_map, encode_file_map
from terminal_agent.tasks.negative_solution_fields import negative_solutions_json, parse_negative_solutions

logger = logging.getLogger(__name__)

DATA_SOURCE = "terminal_agent"
ABILITY = "terminal"
#: Version of the flat layout, stored in every flat dict.
FLAT_FORMAT = "terminal_agent.task.v1"

_TEXT_FIELDS = ("task_id", "instruction", "title", "difficulty", "category", "use_case_category", "dockerfile",
                "test_source")
_JSON_FIELDS = ("tags", "test_weights", "metadata", "env")
#: File maps, JSON-encoded with encode_file_map (bytes as base64).
_FILE_MAP_FIELDS = ("files", "test_support_files", "solution_files")
_LIMIT_PREFIX = "limit_"

FLAT_TASK_KEYS: frozenset[str] = frozenset(
    {*_TEXT_FIELDS, *_JSON_FIELDS, *_FILE_MAP_FIELDS, "solution", "has_solution", "docker_image",
     "has_docker_image", "verifier", "guards", "negative_solutions", "limits", "task_format"}
    | {_LIMIT_PREFIX + name for name in TaskLimits.model_fields}
)
"""Every key :func:`task_to_flat_dict` writes (and :func:`task_from_flat_dict` reads)."""


def task_to_flat_dict(task: Task) -> dict[str, str | int | float | bool]:
    """``task`` as a flat, JSON-safe mapping (the ``extra_info`` of its parquet row).

    Limits become ``limit_<name>`` scalars; tags, file maps, weights, env, metadata and the verifier JSON
    strings; a missing solution is ``solution=""`` with ``has_solution=False`` (``docker_image`` likewise).
    Every row has every key, so the parquet struct has one schema.
    """
    flat: dict[str, str | int | float | bool] = {"task_format": FLAT_FORMAT}
    for name in _TEXT_FIELDS:
        flat[name] = getattr(task, name)
    for name in _JSON_FIELDS:
        flat[name] = json.dumps(getattr(task, name), ensure_ascii=False, sort_keys=name != "tags")
    for name in _FILE_MAP_FIELDS:
        flat[name] = json.dumps(encode_file_map(getattr(task, name)), ensure_ascii=False, sort_keys=True)
    flat["solution"] = task.solution if task.solution is not None else ""
    flat["has_solution"] = task.solution is not None
    flat["docker_image"] = task.docker_image if task.docker_image is not None else ""
    flat["has_docker_image"] = task.docker_image is not None
    flat["verifier"] = json.dumps(task.verifier.model_dump(mode="json", exclude_defaults=True), sort_keys=True)
    flat["guards"] = guards_json(task.guards) if task.guards is not None else ""
    flat["negative_solutions"] = negative_solutions_json(task.negative_solutions) if task.negative_solutions else ""
    for name, value in task.limits.model_dump().items():
        flat[_LIMIT_PREFIX + name] = 0 if name in LATE_UNSET_LIMITS and value is None else value
    unset = {name: None for name, value in task.limits.model_dump().items()
             if value is None and TaskLimits.model_fields[name].default is not None}
    if unset:  # a null limit_* column reads back as the default: the JSON column says "unset" (no limit)
        flat["limits"] = json.dumps(unset, sort_keys=True)
    return flat


def _decode_json(data: Mapping[str, Any], name: str, default: Any) -> Any:
    value = data.get(name)
    if value is None:
        return default
    if isinstance(value, str):
        if not value.strip():
            return default
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(f"is not valid JSON: {exc.msg}", field=name) from None
    return value  # already decoded (a caller passed the nested form)


def _optional_text(data: Mapping[str, Any], name: str, flag: str) -> str | None:
    """``data[name]`` unless ``data[flag]`` says there is none (no flag: an empty value means none)."""
    present = data.get(flag)
    value = data.get(name)
    if present is None:
        present = bool(value)
    return value if present and value is not None else None


def task_from_flat_dict(data: Mapping[str, Any] | str) -> Task:
    """Rebuild a Task from :func:`task_to_flat_dict` output (or its JSON string).

    Keys that are not Task fields (``index``, rLLM ``env_args`` such as ``max_steps``) are ignored.
    Raises :class:`TaskFormatError` naming the field that is wrong.
    """
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(f"extra_info is not valid JSON: {exc.msg}", field="extra_info") from None
    if not isinstance(data, Mapping):
        raise TaskFormatError(f"extra_info must be a mapping, not {type(data).__name__}", field="extra_info")
    for key in FLAT_TASK_KEYS:
        value = data.get(key)
        problem = cell_problem(key, value, file_map=key in _FILE_MAP_FIELDS) if isinstance(value, str) else None
        if problem:
            raise TaskFormatError(problem, field=key)
    fields: dict[str, Any] = {name: data[name] for name in _TEXT_FIELDS if name in data and data[name] is not None}
    for name in (*_JSON_FIELDS, *_FILE_MAP_FIELDS, "verifier"):
        if name in data:
            fields[name] = _decode_json(data, name, None)
            if fields[name] is None:
                del fields[name]
    for name in _FILE_MAP_FIELDS:
        if name in fields:
            try:
                fields[name] = decode_file_map(fields[name], name)
            except ValueError as exc:
                raise TaskFormatError(str(exc).removeprefix(f"{name}: "), field=name) from None
    guards = data.get("guards")
    if isinstance(guards, Mapping):  # the nested form
        fields["guards"] = dict(guards)
    else:
        guard_data = parse_guards_json(guards, None)
        if guard_data is not None:
            fields["guards"] = guard_data
    negatives = parse_negative_solutions(data.get("negative_solutions"), None)
    if negatives is not None:
        fields["negative_solutions"] = negatives
    fields["solution"] = _optional_text(data, "solution", "has_solution")
    fields["docker_image"] = _optional_text(data, "docker_image", "has_docker_image")
    limits = {
        key[len(_LIMIT_PREFIX):]: value
        for key, value in data.items()
        if key.startswith(_LIMIT_PREFIX) and key[len(_LIMIT_PREFIX):] in TaskLimits.model_fields and value is not None
        and not (key[len(_LIMIT_PREFIX):] in LATE_UNSET_LIMITS and value == 0)  # 0: unset (no quota)
    }
    if isinstance(data.get("limits"), (str, Mapping)):
        decoded = _decode_json(data, "limits", {})
        decoded = {} if decoded is None else decoded  # JSON null: the defaults
        if not isinstance(decoded, Mapping):
            raise TaskFormatError(f"must be a JSON object of limits, not {type(decoded).__name__}", field="limits")
        limits = {**decoded, **limits}
    fields["limits"] = limits
    return task_with_guards_from_fields(fields)


def task_to_row(task: Task, split: str = "train", index: int = 0) -> dict[str, Any]:
    """The verl/rLLM parquet row of ``task`` (see the module docstring)."""
    extra_info: dict[str, Any] = {"index": index, "split": split}
    extra_info.update(task_to_flat_dict(task))
    return {
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": task.instruction}],
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": ""},
        "extra_info": extra_info,
    }


def write_parquet(tasks: Iterable[Task], path: str | Path, split: str = "train") -> Path:
    """Write one row per task to ``path`` atomically (temp file beside it, renamed at the end)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    rows = [task_to_row(task, split=split, index=index) for index, task in enumerate(tasks)]
    table = pa.Table.from_pylist(rows)
    with atomic_output_file(path) as temp_path:
        pq.write_table(table, temp_path)
    logger.debug("wrote %d row(s) to %s", len(rows), path)
    return path


def read_parquet(path: str | Path) -> list[Task]:
    """Tasks of a parquet file written by :func:`write_parquet` (``extra_info`` struct or JSON string).

    Raises :class:`TaskFormatError` naming the row and field of the first bad row.
    """
    tasks, errors = read_parquet_with_errors(path)
    if errors:
        raise errors[0]
    return tasks


def read_parquet_with_errors(path: str | Path) -> tuple[list[Task], list[TaskFormatError]]:
    """Good tasks and one error per bad row of ``path`` (rows numbered from 0); a repeated task_id is an error
    on every row after the first."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        # pyarrow's own family: a truncated or corrupt file, an unsupported encoding or type
        raise TaskFormatError(f"cannot read parquet file: {exc}", location=str(path)) from None
    if table.num_rows == 0:
        return [], []
    if "extra_info" not in table.column_names:
        raise TaskFormatError("parquet file has no 'extra_info' column", location=str(path), field="extra_info")
    tasks: list[Task] = []
    errors: list[TaskFormatError] = []
    first_row: dict[str, int] = {}
    for number, cell in enumerate(_column_cells(table.column("extra_info"))):
        location = f"{path.name}:row {number}"
        try:
            extra_info = cell.as_py()
        except (UnicodeDecodeError, pa.ArrowException) as exc:
            # a string whose bytes are not UTF-8 (or a value pyarrow cannot convert) spoils this row only
            errors.append(TaskFormatError(f"cannot decode the row: {type(exc).__name__}: {exc}", location=location,
                                          field="extra_info"))
            continue
        try:
            task = task_from_flat_dict(extra_info)
        except TaskFormatError as exc:
            errors.append(TaskFormatError(exc.reason, location=location, field=exc.field))
            continue
        except UNTRUSTED_CONTENT_ERRORS as exc:
            # rows are untrusted: a value of an unexpected type (or nesting deep enough to recurse) spoils this row only
            errors.append(TaskFormatError(f"cannot read the row: {type(exc).__name__}: {exc}", location=location,
                                          field="extra_info"))
            continue
        if task.task_id in first_row:
            errors.append(TaskFormatError(f"duplicate task_id {task.task_id!r} (first used on row {first_row[task.task_id]})",
                                          location=location, field="task_id"))
            continue
        first_row[task.task_id] = number
        tasks.append(task)
    return tasks, errors


def _column_cells(column: Any) -> Iterable[Any]:
    """The cells of a pyarrow chunked column, one scalar at a time (converted by the caller, so one undecodable
    row does not spoil the column)."""
    for chunk in column.chunks:
        for index in range(len(chunk)):
            yield chunk[index]
