"""Shared pieces of the local-trainer tests: real tasks, a demonstration driver with reward variance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from terminal_agent.tasks.csv.format import read_tasks_csv
from terminal_agent.training.local.demonstration_client import alternating_demonstrations

DATASET = Path(__file__).resolve().parents[2] / "dataset" / "latest_verified.csv"


def shipped_tasks(*task_ids: str) -> list:
    tasks = {t.task_id: t for t in read_tasks_csv(DATASET).tasks}
    return [tasks[t] for t in task_ids]


def alternating_client_factory(tasks: list) -> Any:
    """``client_factory`` for ``train_local``: the package's alternating demonstrations (reference solution, then
    finish at once, per task in turn), strict about prompts that name no known task."""
    return alternating_demonstrations(tasks, strict=True)
