"""The tool contract: one class per tool, registered by name in :data:`TOOLS`.

A tool declares its fields as a pydantic model (``Args``), one minimal example per variant
(``examples``, shown in teaching messages and in the system prompt) and a ``run`` method that
turns validated arguments into a :class:`ToolOutput`. Per-episode state (todos, notes,
background jobs, whether the helper script is uploaded) lives in :class:`ToolContext`, so tool
instances are stateless. Adding a tool is one new module in ``actions/tools``.
"""

from __future__ import annotations

import logging
import posixpath
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from terminal_agent.actions.config import ActionConfig
from terminal_agent.errors import ToolError
from terminal_agent.interfaces import Sandbox
from terminal_agent.registry import Registry

logger = logging.getLogger(__name__)


@dataclass
class ToolOutput:
    """What one action produced; ``text`` is shown to the model inside ``<TAG_output>``."""

    text: str
    ok: bool = True
    """False when the action failed (non-zero exit, missing file, edit not unique ...)."""
    finished: bool = False
    """True when this action ends the episode (``finish``, or ``end_after_cmd_success`` met)."""
    finish_message: str | None = None
    exit_code: int | None = None
    """Exit status of a ``bash`` action (None for other tools and background starts)."""


@dataclass
class BackgroundJob:
    """A ``bash`` action started with ``block: false``."""

    cmd: str
    started_turn: int


@dataclass
class ToolContext:
    """Everything a tool may touch during one episode: the sandbox, the limits and the episode state."""

    sandbox: Sandbox
    config: ActionConfig = field(default_factory=ActionConfig)
    todos: Any = None
    """The episode's :class:`~terminal_agent.actions.tools.todo.TodoList` (created on first use)."""
    notes: list[str] = field(default_factory=list)
    """Scratchpad notes, in the order they were added."""
    background_jobs: list[BackgroundJob] = field(default_factory=list)
    helper_uploaded: bool = False
    """Whether the search/metadata helper script is already in the sandbox."""
    turn_index: int = 0
    """Number of turns run so far with this context."""

    def resolve_path(self, path: str) -> str:
        """Absolute, normalised form of ``path``; relative paths are taken from the shell's cwd.

        ``~`` and ``~/...`` start at ``$HOME``. Both are asked with constant commands (``pwd``,
        ``printf %s "$HOME"``): model text never reaches a shell.
        """
        if not path:
            raise ToolError("path is empty")
        if "\x00" in path:
            raise ToolError("path contains a NUL byte")
        if path == "~" or path.startswith("~/"):
            result = self.sandbox.exec('printf %s "$HOME"', timeout=10)
            home = result.output.strip() if result.ok and result.output.strip().startswith("/") else "/root"
            path = home + path[1:]
        if not path.startswith("/"):
            result = self.sandbox.exec("pwd", timeout=10)
            cwd = result.output.strip().splitlines()[-1] if result.ok and result.output.strip() else "/"
            path = posixpath.join(cwd, path)
        return posixpath.normpath(path).replace("//", "/")


class Tool(ABC):
    """Base of every tool. Subclasses set the class attributes and implement :meth:`run`."""

    name: ClassVar[str]
    """The XML tag of the action (``bash``)."""
    Args: ClassVar[type[BaseModel]]
    """Pydantic model of the YAML body; unknown fields are rejected (``extra="forbid"``)."""
    examples: ClassVar[dict[str, str]]
    """Variant -> YAML body of one minimal correct example. The first one is the tool's example."""
    primary_field: ClassVar[str | None] = None
    """The field a bare body stands for (``cmd`` for bash); None when no bare form is accepted."""
    description: ClassVar[str] = ""
    """One line for the system prompt: what the tool does and its fields (may use ``${...}`` limits)."""
    prompt_order: ClassVar[int] = 50
    """Position in the system prompt (lower first)."""

    @classmethod
    def example(cls, variant: str | None = None) -> str:
        """A complete, correct action (tag included) for ``variant`` or the tool's first example."""
        body = cls.examples.get(variant or "", None) if variant else None
        if body is None:
            body = next(iter(cls.examples.values()))
        return f"<{cls.name}>\n{body.strip()}\n</{cls.name}>"

    @abstractmethod
    def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        """Carry out the action. Raise :class:`ToolError` for a failure the model caused.

        ``SandboxError`` (a broken sandbox) must propagate untouched.
        """


TOOLS: Registry[type[Tool]] = Registry("tool")
"""Every tool class by its tag name: one line per tool, naming the class in its module under ``actions/tools/``
(imported on first use). A new tool is one module there plus one line here; a tool defined elsewhere registers
its class (``TOOLS.register("name")(MyTool)``)."""

_TOOLS = "terminal_agent.actions.tools"
TOOLS.register_path("bash", f"{_TOOLS}.bash:BashTool")
TOOLS.register_path("file", f"{_TOOLS}.file:FileTool")
TOOLS.register_path("finish", f"{_TOOLS}.finish:FinishTool")
TOOLS.register_path("scratchpad", f"{_TOOLS}.scratchpad:ScratchpadTool")
TOOLS.register_path("search", f"{_TOOLS}.search:SearchTool")
TOOLS.register_path("todo", f"{_TOOLS}.todo:TodoTool")


def cap_text(text: str, max_chars: int) -> str:
    """``text`` cut in the middle to at most about ``max_chars`` characters, the cut announced."""
    if len(text) <= max_chars:
        return text
    head = max_chars * 2 // 3
    tail = max_chars - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"
