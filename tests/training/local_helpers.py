"""Shared pieces of the local-trainer tests: real tasks, a demonstration driver with reward variance."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from terminal_agent.tasks.csv_format import read_tasks_csv
from terminal_agent.training.demonstration_client import DemonstrationClient
from terminal_agent.training.sft_warm_start import FINISH_REPLY, bash_reply

DATASET = Path(__file__).resolve().parents[2] / "dataset" / "latest_verified.csv"


def shipped_tasks(*task_ids: str) -> list:
    tasks = {t.task_id: t for t in read_tasks_csv(DATASET).tasks}
    return [tasks[t] for t in task_ids]


def alternating_client_factory(tasks: list) -> Any:
    """``client_factory`` for ``train_local``: within each task, the first episodes to ask run the
    reference solution then finish (reward 1), the next finish at once (partial credit), and so on
    alternately - a group with real reward variance, through the real env and grader."""
    by_instruction = {t.instruction: t.solution for t in tasks}

    def factory(policy: Any, config: Any) -> DemonstrationClient:
        counts: dict[str, int] = {}
        lock = threading.Lock()

        def reply(messages: list[dict[str, str]]) -> str:
            if any(m["role"] == "assistant" for m in messages):
                return FINISH_REPLY
            user = "\n".join(m["content"] for m in messages if m["role"] == "user")
            solution = next((s for instr, s in by_instruction.items() if instr in user), None)
            assert solution is not None, "no known instruction in the first prompt"
            with lock:
                k = counts.get(solution, 0)
                counts[solution] = k + 1
            return bash_reply(solution) if k % 2 == 0 else FINISH_REPLY

        return DemonstrationClient(policy.model, policy.tokenizer, reply, temperature=config.temperature)

    return factory
