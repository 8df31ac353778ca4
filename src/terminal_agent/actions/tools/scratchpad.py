"""``<scratchpad>``: notes kept for the episode (they survive context compaction in the agent's summary)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

from terminal_agent.actions.base import Tool, ToolContext, ToolOutput, cap_text


class ScratchpadArgs(BaseModel):
    """Fields of a ``<scratchpad>`` action."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    action: Literal["add_note", "view_all_notes"]
    """add_note stores ``note``; view_all_notes lists every note."""
    note: str | None = None
    """add_note: the text to keep."""

    @model_validator(mode="after")
    def _note_needed(self) -> Self:
        if self.action == "add_note" and not (self.note or "").strip():
            raise ValueError("add_note needs note")
        return self


def render_notes(notes: list[str]) -> str:
    return "\n".join(f"{number}. {note}" for number, note in enumerate(notes, 1)) or "(no notes)"


class ScratchpadTool(Tool):
    name = "scratchpad"
    description = "action is add_note (note) or view_all_notes."
    prompt_order = 50
    Args = ScratchpadArgs
    examples = {
        "add_note": "action: add_note\nnote: The tests live in /app/tests",
        "view_all_notes": "action: view_all_notes",
    }

    def run(self, args: ScratchpadArgs, ctx: ToolContext) -> ToolOutput:
        if args.action == "add_note":
            ctx.notes.append((args.note or "").strip())
            return ToolOutput(f"Note {len(ctx.notes)} saved.")
        return ToolOutput(cap_text(render_notes(ctx.notes), ctx.config.max_output_chars))
