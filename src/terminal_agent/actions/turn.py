"""Run the actions of one model reply, in order, and build the observation the model sees next."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.actions.base import TOOLS, ToolContext, ToolOutput, cap_text
from terminal_agent.actions.parser import ParseFailure, parsed_reply
from terminal_agent.errors import AgentFormatError, ToolError

logger = logging.getLogger(__name__)


@dataclass
class TurnResult:
    """What one reply did."""

    observation: str
    """``<TAG_output>`` blocks and ``<format_error>`` teaching messages, in action order."""
    finished: bool = False
    """``finish`` ran, or a ``bash`` action with ``end_after_cmd_success`` exited 0."""
    finish_message: str | None = None
    only_errors: bool = False
    """No action could be run (nothing found, or only malformed/unknown tags)."""
    actions: list[dict[str, Any]] = field(default_factory=list)
    """One record per tag: name, args, ok, duration_s, output_chars (+ exit_code, format_error)."""
    truncated_reply: bool = False
    """The reply opened an action tag and never closed it."""


def no_action_error(reply_text: str = "") -> AgentFormatError:
    hint = " Markdown code blocks are not run: put the command in a <bash> tag." if "```" in reply_text else ""
    return AgentFormatError(
        f"No action found in your reply.{hint} Every reply needs at least one action tag, for example:",
        TOOLS.get("bash").example(),
        "When the task is done, reply with:\n" + TOOLS.get("finish").example(),
    )


def format_error_block(error: AgentFormatError) -> str:
    return "<format_error>\n" + "\n".join(error.messages) + "\n</format_error>"


def output_block(name: str, text: str) -> str:
    return f"<{name}_output>\n{text}\n</{name}_output>"


def run_turn(reply_text: str, ctx: ToolContext) -> TurnResult:
    """Parse ``reply_text`` (a :class:`ReplyText` brings the agent's parse along) and run its actions against
    ``ctx.sandbox``.

    A malformed action stops the reply there (later actions may depend on it); an unknown tag
    is reported and the rest still runs; ``finish`` stops the reply. ``SandboxError`` propagates.
    """
    ctx.turn_index += 1
    config = ctx.config
    reply = parsed_reply(reply_text)
    result = TurnResult(observation="", truncated_reply=reply.truncated)
    blocks: list[str] = []
    ran = 0
    if not reply.items:
        blocks.append(format_error_block(no_action_error(reply.text)))
    for position, item in enumerate(reply.items):
        if isinstance(item, ParseFailure):
            block = format_error_block(item.error)
            blocks.append(block)
            result.actions.append(
                {"name": item.name, "args": None, "ok": False, "duration_s": 0.0, "output_chars": len(block), "format_error": True}
            )
            if item.known_tool:
                later = sum(1 for other in reply.items[position + 1 :] if not isinstance(other, ParseFailure))
                if later:
                    blocks.append(f"[{later} later action(s) not run because of this error]")
                break
            continue
        if ran >= config.max_actions_per_turn:
            blocks.append(f"[actions after the first {config.max_actions_per_turn} were not run]")
            break
        tool = TOOLS.get(item.name)()
        started = time.monotonic()
        try:
            output = tool.run(item.args, ctx)
        except ToolError as exc:
            output = ToolOutput(f"Error: {exc}", ok=False)
        ran += 1
        block = output_block(item.name, cap_text(output.text, config.max_output_chars))
        blocks.append(block)
        record: dict[str, Any] = {
            "name": item.name,
            "args": item.args.model_dump(mode="json", exclude_none=True),
            "ok": output.ok,
            "duration_s": round(time.monotonic() - started, 4),
            "output_chars": len(block),
        }
        if output.exit_code is not None:
            record["exit_code"] = output.exit_code
        result.actions.append(record)
        if output.finished:
            result.finished = True
            result.finish_message = output.finish_message
            break
    result.only_errors = ran == 0
    result.observation = "\n".join(blocks)
    logger.debug("turn %d: %d action(s) run, finished=%s", ctx.turn_index, ran, result.finished)
    return result
