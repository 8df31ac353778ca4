"""The ``tb`` entry of :data:`~terminal_agent.tasks.formats.TASK_FORMATS`: terminal-bench v1 task directories.

Reading and writing one task directory is :mod:`terminal_agent.tasks.terminal_bench.format`; this module only
fits it to the :class:`~terminal_agent.tasks.formats.DirectoryFormat` signature. It is imported on the
registry's first ``get``.
"""

from __future__ import annotations

from pathlib import Path

import terminal_agent.tasks.terminal_bench.format as terminal_bench
from terminal_agent.tasks.formats import DirectoryFormat
from terminal_agent.tasks.model import Task


class TerminalBenchFormat(DirectoryFormat):
    """terminal-bench v1 task directories (:mod:`~terminal_agent.tasks.terminal_bench.format`)."""

    name = "tb"
    summary = "terminal-bench v1 task directories (task.yaml)"
    detection_order = 30
    marker = terminal_bench.TASK_YAML

    def read_task(self, task_dir: Path) -> Task:
        return terminal_bench.read_tb_task(task_dir)

    def write_task(self, task: Task, parent_dir: Path) -> Path:
        return terminal_bench.write_tb_task(task, parent_dir)

    def check_layout(self, task: Task) -> None:
        terminal_bench.check_tb_layout(task)


FORMAT = TerminalBenchFormat()
"""The registry entry: :mod:`terminal_agent.tasks.formats` registers it by this path."""
