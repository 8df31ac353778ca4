"""What the ``weighted_pytest`` mode asks of a task: a ``test_source`` with test functions and ``test_weights``
naming some of them (guards among them too), not all zero.

The ``task_fields`` companion of the mode's registry line; ``Task`` validation calls :meth:`check` for every task
of the mode. Imports nothing of the grader.
"""

from __future__ import annotations

from terminal_agent.tasks.model import Task, find_test_functions

__all__ = ["TASK_FIELDS", "WeightedPytestTaskFields"]


class WeightedPytestTaskFields:
    """The mode's :class:`~terminal_agent.tasks.model.TaskFieldRules`."""

    def check(self, task: Task) -> None:
        if task.guards is not None:
            try:
                declared_guards = find_test_functions(task.test_source)
            except ValueError:
                declared_guards = []  # the unparsable source is reported below, naming test_source
            unknown = [name for name in task.guards.tests if name not in declared_guards]
            if unknown and declared_guards:
                raise ValueError(f"guards name tests that do not exist: {', '.join(unknown)}")
        try:
            declared = find_test_functions(task.test_source)
        except ValueError as exc:
            raise ValueError(f"test_source: {exc}") from None
        if not declared:
            raise ValueError("test_source defines no test functions")
        if not task.test_weights:
            raise ValueError("test_weights is empty")
        missing = [name for name in task.test_weights if name not in declared]
        if missing:
            raise ValueError(
                f"test_weights name tests that do not exist: {', '.join(missing)} "
                f"(tests found: {', '.join(declared)})"
            )
        if sum(task.test_weights.values()) <= 0:
            raise ValueError("test_weights are all zero")

    def unweighted_tests(self, task: Task) -> list[str]:
        """Declared tests that neither ``test_weights`` nor the guards name: they count with weight 0."""
        guards = set(task.guards.tests) if task.guards is not None else set()
        return [name for name in task.test_functions if name not in task.test_weights and name not in guards]


TASK_FIELDS = WeightedPytestTaskFields()
