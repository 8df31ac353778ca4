"""Negative solutions (:class:`~terminal_agent.tasks.model.NegativeSolution`) as the task formats store them.

Every format keeps them as one JSON list of objects (``name``, ``script``, ``max_score``, ``why``): a CSV cell
``negative_solutions`` (written only when some task of the file has them), a parquet key ``negative_solutions``
(``""``: none), the ``negative_solutions`` list under ``terminal_agent:`` of a terminal-bench task.yaml, and
``negative_solutions_json`` in ``[metadata.terminal_agent]`` of a Harbor task.toml. Bad data is a
:class:`~terminal_agent.errors.TaskFormatError` naming that field.
"""

from __future__ import annotations

import json
from typing import Any

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.model import NegativeSolution

#: Field name of the negative solutions in every format.
NEGATIVE_SOLUTIONS_FIELD = "negative_solutions"


def negative_solutions_data(negatives: list[NegativeSolution]) -> list[dict[str, Any]]:
    """The JSON-safe list of ``negatives`` (every field written)."""
    return [negative.model_dump(mode="json") for negative in negatives]


def negative_solutions_json(negatives: list[NegativeSolution]) -> str:
    """The JSON text of ``negatives`` (keys sorted, every field written)."""
    return json.dumps(negative_solutions_data(negatives), sort_keys=True, ensure_ascii=False)


def parse_negative_solutions(value: Any, location: str | None,
                             field: str = NEGATIVE_SOLUTIONS_FIELD) -> list[dict[str, Any]] | None:
    """The list of a JSON text or of an already decoded list (``""``/None: none); a TaskFormatError naming
    ``field`` otherwise. The items are checked by the Task model."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                                  location=location, field=field) from None
        except RecursionError:  # json recurses per level of nesting
            raise TaskFormatError("is JSON nested too deeply", location=location, field=field) from None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise TaskFormatError("must be a JSON list of objects with name, script, max_score and why",
                              location=location, field=field)
    return [dict(item) for item in value]
