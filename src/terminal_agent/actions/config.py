"""Limits of the action language and its tools (one object per episode, shared by every tool)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ActionConfig(BaseModel):
    """How actions are parsed, bounded and reported back to the model."""

    model_config = ConfigDict(extra="forbid")

    max_output_chars: int = Field(4000, ge=200)
    """Cap of one tool's output as shown to the model; the middle is cut and the cut is announced."""
    default_timeout_secs: float = Field(60.0, gt=0)
    """Deadline of a ``bash`` action that sets no ``timeout_secs`` (usually the task's command timeout)."""
    max_timeout_secs: float = Field(600.0, gt=0)
    """Upper bound of ``timeout_secs``; larger requests are lowered to it (and the output says so)."""
    max_consecutive_error_turns: int = Field(3, ge=1)
    """The environment ends the episode after this many turns in a row without one well-formed action."""
    max_actions_per_turn: int = Field(10, ge=1)
    """Actions after this many in one reply are not run (the observation says so)."""
    read_default_lines: int = Field(200, ge=1)
    """Lines shown by ``file`` ``read`` when no ``limit`` is given."""
    read_max_line_chars: int = Field(500, ge=20)
    """Longer lines are shortened in ``file`` ``read`` output."""
    search_max_results: int = Field(100, ge=1)
    """Cap of grep matches, glob paths and ls entries (results are sorted before capping)."""
    helper_timeout_secs: float = Field(30.0, gt=0)
    """Deadline of one run of the in-container search/metadata helper."""
    helper_dir: str = "/var/tmp/terminal-agent-tools"
    """Where the helper script and its request/response files live inside the sandbox."""
