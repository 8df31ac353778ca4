"""Tasks: the typed model and its formats (CSV, terminal-bench v1, Harbor, parquet), registered in
:data:`~terminal_agent.tasks.formats.TASK_FORMATS`.

One sub-package per format (``csv/``, ``parquet/``, ``terminal_bench/``, ``harbor/``), each holding its registry
entry in ``format_plugin``; shared here: ``model``
(the Task), ``formats`` (the registry), ``loading`` and ``conversion`` (through the registry, naming no
format), ``inspection`` (``tasks inspect``), the field codecs the formats share (``guard_fields``,
``negative_solution_fields``, ``cell_bounds``, ``task_dirs``, ``atomic_output``), the grading-mode table and
``families/`` (generated task families).
"""

from terminal_agent.tasks.formats import TASK_FORMATS, TaskFormat, get_format
from terminal_agent.tasks.loading import collect_tasks, detect_source_kind, load_tasks
from terminal_agent.tasks.model import Task, TaskLimits, VerifierSpec, find_test_functions

__all__ = [
    "TASK_FORMATS",
    "Task",
    "TaskFormat",
    "TaskLimits",
    "VerifierSpec",
    "collect_tasks",
    "detect_source_kind",
    "find_test_functions",
    "get_format",
    "load_tasks",
]
