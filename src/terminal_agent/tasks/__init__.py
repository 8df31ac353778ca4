"""Tasks: the typed model and its formats (CSV, terminal-bench v1, Harbor, parquet)."""

from terminal_agent.tasks.loading import load_tasks
from terminal_agent.tasks.model import Task, TaskLimits, find_test_functions

__all__ = ["Task", "TaskLimits", "find_test_functions", "load_tasks"]
