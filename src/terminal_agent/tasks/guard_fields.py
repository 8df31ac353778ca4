"""Guard tests (:class:`~terminal_agent.tasks.model.TestGuards`) as the task formats store them.

Every format keeps the guards as the JSON object of ``TestGuards`` (``{"tests": [...], "on_failure": "zero" |
"cap", "cap": 0.0}``): a CSV cell ``guards``, a parquet key ``guards`` (``""``: none), the ``guards`` mapping
under ``terminal_agent:`` of a terminal-bench task.yaml, and ``guards_json`` in ``[metadata.terminal_agent]`` of
a Harbor task.toml. Bad guard data is a :class:`~terminal_agent.errors.TaskFormatError` whose field starts with
``guards``.
"""

from __future__ import annotations

import json
from typing import Any

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.model import Task, TestGuards, task_from_fields

#: Field name of the guards in every format.
GUARDS_FIELD = "guards"


def guards_json(guards: TestGuards) -> str:
    """The JSON text of ``guards`` (keys sorted, every field written)."""
    return json.dumps(guards.model_dump(mode="json"), sort_keys=True)


def parse_guards_json(text: Any, location: str | None, field: str = GUARDS_FIELD) -> dict[str, Any] | None:
    """The guards object of a JSON text (``""``/None: no guards); a TaskFormatError naming ``field`` otherwise."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, str):
        raise TaskFormatError(f"must be a JSON string of the guards, not {type(text).__name__}", location=location,
                              field=field)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                              location=location, field=field) from None
    if not isinstance(value, dict):
        raise TaskFormatError("must be a JSON object with tests, on_failure and cap", location=location, field=field)
    return value


def task_with_guards_from_fields(fields: dict[str, Any], location: str | None = None) -> Task:
    """:func:`~terminal_agent.tasks.model.task_from_fields`, but a task-level error about the guards (a guard with a
    weight, a guard naming no test) names the field ``guards`` rather than ``task``."""
    try:
        return task_from_fields(fields, location)
    except TaskFormatError as exc:
        if exc.field == "task" and exc.reason.startswith("guard"):
            raise TaskFormatError(exc.reason, location=exc.location, field=GUARDS_FIELD) from None
        raise
