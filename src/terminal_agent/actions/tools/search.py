"""``<search>``: grep (regex over file contents), glob (``**`` patterns) and ls (directory listing).

Runs the fixed helper script in the sandbox; the parameters travel in a JSON file, so patterns
and paths never reach a shell. Results are sorted (path, then line) and capped.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from terminal_agent.actions.base import Tool, ToolContext, ToolOutput, cap_text
from terminal_agent.actions.helper import run_helper
from terminal_agent.errors import ToolError


class SearchArgs(BaseModel):
    """Fields of a ``<search>`` action."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    action: Literal["grep", "glob", "ls"]
    """grep: lines matching a regex; glob: paths matching a pattern; ls: directory entries."""
    pattern: str | None = None
    """grep: Python regular expression; glob: pattern such as ``**/*.py``."""
    path: str = "."
    """File or directory to search (relative paths start at the shell's current directory)."""
    include: str | None = None
    """grep: only files whose name (or relative path) matches this glob, e.g. ``*.py`` or ``*.{c,h}``."""
    ignore: list[str] = Field(default_factory=list)
    """ls: glob patterns of names to leave out."""
    depth: int = Field(1, ge=1, le=5)
    """ls: how many directory levels to list."""

    @model_validator(mode="before")
    @classmethod
    def _ignore_as_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("ignore"), str):
            data = dict(data, ignore=[data["ignore"]])
        return data

    @model_validator(mode="after")
    def _pattern_needed(self) -> Self:
        if self.action in ("grep", "glob") and not self.pattern:
            raise ValueError(f"action {self.action} needs pattern")
        return self


class SearchTool(Tool):
    name = "search"
    description = (
        "action is grep (pattern, path, include), glob (pattern like **/*.py, path) or ls (path, "
        "ignore, depth)."
    )
    prompt_order = 30
    Args = SearchArgs
    examples = {
        "grep": "action: grep\npattern: root\npath: /etc/passwd",
        "glob": "action: glob\npattern: '**/*.conf'\npath: /etc",
        "ls": "action: ls\npath: /etc\nignore:\n  - '*.d'",
    }

    def run(self, args: SearchArgs, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve_path(args.path)
        request: dict[str, Any] = {"op": args.action, "path": path, "pattern": args.pattern, "include": args.include}
        if args.action == "ls":
            request.update(ignore=args.ignore, depth=args.depth)
        response = run_helper(ctx, request)
        if not response.get("ok"):
            raise ToolError(response.get("error", "search failed"))
        results, total = response["results"], response.get("total", len(response["results"]))
        if args.action == "grep":
            lines = [f"{hit_path}:{number}: {text}" for hit_path, number, text in results]
            empty = f"No matches for {args.pattern!r} in {path}."
        elif args.action == "glob":
            lines = list(results)
            empty = f"No paths match {args.pattern!r} under {path}."
        else:
            lines = [f"{path}:"] + list(results)
            empty = f"{path} is empty."
        shown = len(results)
        if not shown:
            return ToolOutput(empty)
        if total > shown:
            lines.append(f"[{total - shown} more results not shown; narrow the search]")
        return ToolOutput(cap_text("\n".join(lines), ctx.config.max_output_chars))
