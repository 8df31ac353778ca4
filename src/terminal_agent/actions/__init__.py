"""The action language: XML tags with a YAML body, one registered tool per tag.

    from terminal_agent.actions import ActionConfig, ToolContext, run_turn
    ctx = ToolContext(sandbox=sandbox, config=ActionConfig())
    turn = run_turn(reply_text, ctx)   # TurnResult: observation, finished, only_errors, ...
"""

from terminal_agent.actions.base import TOOLS, Tool, ToolContext, ToolOutput
from terminal_agent.actions.config import ActionConfig
from terminal_agent.actions.parser import (
    ParsedAction,
    ParsedReply,
    ParseFailure,
    ReplyText,
    parse_action,
    parse_reply,
    parsed_reply,
    strip_think,
)
from terminal_agent.actions.turn import TurnResult, run_turn

__all__ = [
    "TOOLS",
    "ActionConfig",
    "ParseFailure",
    "ParsedAction",
    "ParsedReply",
    "ReplyText",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "TurnResult",
    "parse_action",
    "parse_reply",
    "parsed_reply",
    "run_turn",
    "strip_think",
]
