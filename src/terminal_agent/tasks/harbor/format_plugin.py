"""The ``harbor`` entry of :data:`~terminal_agent.tasks.formats.TASK_FORMATS`: Harbor / Terminal-Bench 2 task
directories.

Reading and writing one task directory is :mod:`terminal_agent.tasks.harbor.format`; this module only fits it
to the :class:`~terminal_agent.tasks.formats.DirectoryFormat` signature. It is imported on the registry's first
``get``.
"""

from __future__ import annotations

from pathlib import Path

import terminal_agent.tasks.harbor.format as harbor
from terminal_agent.tasks.formats import DirectoryFormat
from terminal_agent.tasks.model import Task


class HarborFormat(DirectoryFormat):
    """Harbor / Terminal-Bench 2 task directories (:mod:`~terminal_agent.tasks.harbor.format`)."""

    name = "harbor"
    summary = "Harbor / Terminal-Bench 2 task directories (task.toml)"
    detection_order = 40
    marker = "task.toml"

    def read_task(self, task_dir: Path) -> Task:
        return harbor.read_harbor_task(task_dir)

    def write_task(self, task: Task, parent_dir: Path) -> Path:
        return harbor.write_harbor_task(task, parent_dir)

    def check_layout(self, task: Task) -> None:
        harbor.check_harbor_layout(task)


FORMAT = HarborFormat()
"""The registry entry: :mod:`terminal_agent.tasks.formats` registers it by this path."""
