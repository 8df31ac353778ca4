"""The agent-turn workload shared by the sampling benchmarks: one prompt per row, and token counts.

A GRPO group's first turn asks every episode the same prompt; later turns differ per episode
(each has seen other observations). ``distinct=True`` gives each row its own prompt, so prompt
sharing (one prefill for the group) cannot flatter a sampler.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from terminal_agent.models.embedded import encode_chat

SYSTEM = (
    "You are an agent in a Linux terminal. Reply with exactly one action, for example\n"
    "<bash>\ncmd: ls -la\n</bash>\nWhen the task is done, reply <finish>\nmessage: done\n</finish>."
)
TASKS = ["hello.txt", "notes.md", "data.csv", "report.txt", "config.yaml", "log.txt", "todo.md", "out.json"]


def chat_for(row: int, distinct: bool) -> list[dict[str, str]]:
    """The agent prompt of row ``row``: one task for the whole group, or a different one per row."""
    name = TASKS[row % len(TASKS)] if distinct else TASKS[0]
    suffix = f" This is attempt {row}." if distinct else ""
    content = f"Create a file /app/{name} that contains the line 'hello world', then check it.{suffix}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": content}]


def chats(rows: int, distinct: bool) -> list[list[dict[str, str]]]:
    """The chats of rows ``0 .. rows-1``."""
    return [chat_for(row, distinct) for row in range(rows)]


def prompt_ids(tokenizer: Any, rows: int, distinct: bool) -> list[list[int]]:
    """The rendered prompt ids of rows ``0 .. rows-1`` (chat template, assistant generation prompt)."""
    return [encode_chat(tokenizer, chat) for chat in chats(rows, distinct)]


def sampled_length(ids: Sequence[int], eos_ids: Iterable[int]) -> int:
    """Tokens a row sampled: up to and including its first EOS id (padding after it is not sampled)."""
    eos = set(eos_ids)
    for position, token in enumerate(ids):
        if token in eos:
            return position + 1
    return len(ids)
