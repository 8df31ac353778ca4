"""``<finish>``: end the episode (the task is then graded)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from terminal_agent.actions.base import Tool, ToolContext, ToolOutput


class FinishArgs(BaseModel):
    """Fields of a ``<finish>`` action."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    message: str = ""
    """A short summary of what was done."""


class FinishTool(Tool):
    name = "finish"
    description = "end the task when it is done (message says what you did)."
    prompt_order = 90
    Args = FinishArgs
    primary_field = "message"
    examples = {"": "message: Created /app/out.txt"}

    def run(self, args: FinishArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("Episode finished.", finished=True, finish_message=args.message.strip())
