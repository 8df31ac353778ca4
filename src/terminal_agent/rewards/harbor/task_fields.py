"""What the ``harbor`` mode asks of a task: a ``tests/test.sh`` (the verifier), and weights, when given, that are
not all zero (they name CTRF tests for partial credit); a ``test_source``, when given, must parse.

The ``task_fields`` companion of the mode's registry line; ``Task`` validation calls :meth:`check` for every task
of the mode. Imports nothing of the grader.
"""

from __future__ import annotations

from terminal_agent.tasks.model import Task, find_test_functions

__all__ = ["TASK_FIELDS", "HarborTaskFields"]


class HarborTaskFields:
    """The mode's :class:`~terminal_agent.tasks.model.TaskFieldRules`."""

    def check(self, task: Task) -> None:
        if "test.sh" not in task.test_support_files:
            raise ValueError("a task graded in harbor mode needs tests/test.sh (test_support_files['test.sh'])")
        if task.test_weights and sum(task.test_weights.values()) <= 0:
            raise ValueError("test_weights are all zero")
        if task.test_source.strip():
            try:
                find_test_functions(task.test_source)
            except ValueError as exc:
                raise ValueError(f"test_source: {exc}") from None

    def unweighted_tests(self, task: Task) -> list[str]:
        """None: a test the weights leave out is for the verifier's reward file to decide."""
        return []


TASK_FIELDS = HarborTaskFields()
