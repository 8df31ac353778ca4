"""``<todo>``: a task list kept for the episode; several operations per action, ids assigned from 1."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from terminal_agent.actions.base import Tool, ToolContext, ToolOutput
from terminal_agent.errors import ToolError


class TodoOperation(BaseModel):
    """One operation of a ``<todo>`` action."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    action: Literal["add", "complete", "delete", "view_all"]
    """add needs content; complete and delete need id; view_all needs nothing."""
    content: str | None = None
    """add: what to do."""
    id: int | None = None
    """complete / delete: the item's id."""

    @model_validator(mode="after")
    def _fields_of_action(self) -> Self:
        if self.action == "add" and not self.content:
            raise ValueError("add needs content")
        if self.action in ("complete", "delete") and self.id is None:
            raise ValueError(f"{self.action} needs id")
        return self


class TodoArgs(BaseModel):
    """Fields of a ``<todo>`` action."""

    model_config = ConfigDict(extra="forbid")

    operations: list[TodoOperation] = Field(min_length=1)
    """Applied in order."""


@dataclass
class TodoItem:
    id: int
    content: str
    done: bool = False


@dataclass
class TodoList:
    """The episode's todo list. Pure Python, so the agent can replay it for its context summary."""

    items: list[TodoItem] = field(default_factory=list)
    next_id: int = 1

    def apply(self, op: TodoOperation) -> str:
        """Apply one operation; returns a short confirmation, raises :class:`ToolError`."""
        if op.action == "add":
            self.items.append(TodoItem(self.next_id, op.content or ""))
            self.next_id += 1
            return f"added {self.next_id - 1}"
        if op.action == "view_all":
            return "listed"
        item = next((item for item in self.items if item.id == op.id), None)
        if item is None:
            valid = ", ".join(str(item.id) for item in self.items) or "none"
            raise ToolError(f"no todo with id {op.id} (ids: {valid})")
        if op.action == "complete":
            item.done = True
            return f"completed {op.id}"
        self.items.remove(item)
        return f"deleted {op.id}"

    def render(self) -> str:
        if not self.items:
            return "(no todos)"
        return "\n".join(f"{item.id}. [{'x' if item.done else ' '}] {item.content}" for item in self.items)


class TodoTool(Tool):
    name = "todo"
    description = "operations, a list of add (content), complete (id), delete (id), view_all."
    prompt_order = 40
    Args = TodoArgs
    examples = {"": "operations:\n  - action: add\n    content: Read the task files"}

    def run(self, args: TodoArgs, ctx: ToolContext) -> ToolOutput:
        if ctx.todos is None:
            ctx.todos = TodoList()
        done, errors = [], []
        for op in args.operations:
            try:
                done.append(ctx.todos.apply(op))
            except ToolError as exc:
                errors.append(str(exc))
        lines = [f"Error: {error}" for error in errors]
        if done:
            lines.append("Done: " + ", ".join(done) + ".")
        lines.append(ctx.todos.render())
        return ToolOutput("\n".join(lines), ok=not errors)
