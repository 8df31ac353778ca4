"""``<file>``: read, write, edit (exact string replacement), multi_edit (atomic) and metadata.

File contents travel through the sandbox's ``read_file``/``write_file`` (Engine API archives),
so paths and contents never reach a shell. Edits work on the text in memory: decoded as UTF-8
with ``surrogateescape``, so bytes that are not UTF-8 survive an edit unchanged.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from terminal_agent.actions.base import Tool, ToolContext, ToolOutput, cap_text
from terminal_agent.actions.helper import run_helper
from terminal_agent.errors import ToolError

ENCODING = "utf-8"
ERRORS = "surrogateescape"


class EditSpec(BaseModel):
    """One exact replacement."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    old_string: str
    """Text to find, exactly (whitespace and newlines included)."""
    new_string: str
    """Replacement text."""
    replace_all: bool = False
    """Replace every occurrence instead of requiring exactly one."""


REQUIRED = {
    "read": ("path",),
    "write": ("path", "content"),
    "edit": ("path", "old_string", "new_string"),
    "multi_edit": ("path", "edits"),
    "metadata": ("paths",),
}


class FileArgs(BaseModel):
    """Fields of a ``<file>`` action; which ones are needed depends on ``action``."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    action: Literal["read", "write", "edit", "multi_edit", "metadata"]
    """What to do."""
    path: str | None = None
    """The file (absolute, or relative to the shell's current directory)."""
    offset: int | None = Field(None, ge=1)
    """read: first line to show (1-based)."""
    limit: int | None = Field(None, ge=1)
    """read: number of lines to show."""
    content: str | None = None
    """write: the whole new content."""
    old_string: str | None = None
    """edit: exact text to replace."""
    new_string: str | None = None
    """edit: replacement text."""
    replace_all: bool = False
    """edit: replace every occurrence."""
    edits: list[EditSpec] | None = Field(None, min_length=1)
    """multi_edit: edits applied in order; all or none are written."""
    paths: list[str] | None = Field(None, min_length=1, max_length=10)
    """metadata: up to 10 paths."""

    @model_validator(mode="before")
    @classmethod
    def _single_path_metadata(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("action") == "metadata" and "paths" not in data and "path" in data:
            data = dict(data)
            data["paths"] = [data.pop("path")]
        if isinstance(data, dict) and isinstance(data.get("paths"), str):
            data = dict(data, paths=[data["paths"]])
        return data

    @model_validator(mode="after")
    def _fields_of_action(self) -> Self:
        missing = [name for name in REQUIRED[self.action] if getattr(self, name) is None]
        if missing:
            raise ValueError(f"action {self.action} needs {', '.join(missing)}")
        return self


class EditError(ToolError):
    """An edit could not be applied (string missing, not unique, no change)."""


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def apply_edit(text: str, old: str, new: str, replace_all: bool = False) -> tuple[str, int, int]:
    """``(new text, replacements, first changed line)``; raises :class:`EditError` with a useful hint."""
    if old == "":
        raise EditError("old_string is empty; to create or replace a whole file use action: write.")
    if old == new:
        raise EditError("old_string and new_string are the same; nothing would change.")
    count = text.count(old)
    if count == 0:
        raise EditError("old_string was not found in the file." + _near_miss_hint(text, old))
    first = text.find(old)
    if count > 1 and not replace_all:
        lines: list[str] = []
        start = 0
        while (found := text.find(old, start)) >= 0 and len(lines) < 10:
            lines.append(str(line_of(text, found)))
            start = found + len(old)
        raise EditError(
            f"old_string occurs {count} times (lines {', '.join(lines)}); include more surrounding "
            "lines to make it unique, or set replace_all: true."
        )
    return text.replace(old, new) if replace_all else text.replace(old, new, 1), count if replace_all else 1, line_of(text, first)


def apply_edits(text: str, edits: list[EditSpec]) -> tuple[str, int, int]:
    """Apply ``edits`` in order on ``text``; any failure raises and nothing is changed."""
    total, first_line = 0, None
    for number, edit in enumerate(edits, 1):
        try:
            text, count, line = apply_edit(text, edit.old_string, edit.new_string, edit.replace_all)
        except EditError as exc:
            raise EditError(f"edit {number} of {len(edits)} failed, no edit was written: {exc}") from None
        total += count
        first_line = line if first_line is None else min(first_line, line)
    return text, total, first_line or 1


def _near_miss_hint(text: str, old: str) -> str:
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if not first:
        return ""
    lines = [number for number, line in enumerate(text.splitlines(), 1) if line.strip() == first]
    if lines:
        where = ", ".join(str(n) for n in lines[:5])
        return f" Its first line appears (ignoring indentation) at line {where}: check whitespace and the following lines, or read the file first."
    return " Read the file first and copy the text exactly."


def numbered(lines: list[str], start: int, max_chars: int) -> str:
    out = []
    for number, line in enumerate(lines, start):
        if len(line) > max_chars:
            line = line[:max_chars] + f"... [{len(line) - max_chars} more characters]"
        out.append(f"{number:6}\t{line}")
    return "\n".join(out)


class FileTool(Tool):
    name = "file"
    description = (
        "action is read (path, offset, limit), write (path, content), edit (path, old_string, "
        "new_string, replace_all; old_string must match exactly once), multi_edit (path, edits: a "
        "list of old_string/new_string; all or nothing) or metadata (paths: up to 10)."
    )
    prompt_order = 20
    Args = FileArgs
    examples = {
        "read": "action: read\npath: /etc/os-release",
        "write": "action: write\npath: /tmp/hello.txt\ncontent: |\n  hello\n  world",
        "edit": "action: edit\npath: /tmp/hello.txt\nold_string: world\nnew_string: there",
        "multi_edit": (
            "action: multi_edit\npath: /tmp/hello.txt\nedits:\n  - old_string: hello\n    new_string: hi\n"
            "  - old_string: there\n    new_string: all"
        ),
        "metadata": "action: metadata\npaths:\n  - /etc/os-release\n  - /tmp",
    }

    def run(self, args: FileArgs, ctx: ToolContext) -> ToolOutput:
        if args.action == "metadata":
            return self._metadata(args, ctx)
        path = ctx.resolve_path(args.path or "")
        if args.action == "read":
            return self._read(path, args, ctx)
        if args.action == "write":
            data = (args.content or "").encode(ENCODING, ERRORS)
            self._store(path, data, ctx)
            lines = (args.content or "").count("\n") + (0 if (args.content or "").endswith("\n") else 1)
            return ToolOutput(f"Wrote {len(data)} bytes ({lines} lines) to {path}.")
        text = self._load(path, ctx)
        if args.action == "edit":
            new_text, count, line = apply_edit(text, args.old_string or "", args.new_string or "", args.replace_all)
        else:
            new_text, count, line = apply_edits(text, args.edits or [])
        self._store(path, new_text.encode(ENCODING, ERRORS), ctx)
        snippet_lines = new_text.split("\n")
        start = max(1, line - 2)
        snippet = numbered(snippet_lines[start - 1 : start + 7], start, ctx.config.read_max_line_chars)
        plural = "s" if count != 1 else ""
        return ToolOutput(cap_text(f"Edited {path}: {count} replacement{plural}.\n{snippet}", ctx.config.max_output_chars))

    def _load_bytes(self, path: str, ctx: ToolContext) -> bytes:
        """The file's bytes; a missing, directory or unreadable path is a ToolError the model can act on."""
        try:
            return ctx.sandbox.read_file(path)
        except FileNotFoundError:
            raise ToolError(f"file not found: {path}") from None
        except IsADirectoryError:
            raise ToolError(f"{path} is a directory; use <search> with action: ls") from None
        except PermissionError:
            raise ToolError(f"permission denied: {path}") from None
        except OSError as exc:  # e.g. a symlink loop
            raise ToolError(f"cannot read {path}: {exc.strerror or exc}") from None

    def _store(self, path: str, data: bytes, ctx: ToolContext) -> None:
        """Write ``data`` keeping an existing file's mode; a path the model cannot write to is a ToolError.

        ``SandboxError`` (the sandbox itself broke) is not an ``OSError`` and propagates.
        """
        mode = self._existing_mode(ctx, path)
        try:
            ctx.sandbox.write_file(path, data, mode)
        except FileNotFoundError:
            raise ToolError(f"cannot write {path}: a parent directory cannot be created there") from None
        except IsADirectoryError:
            raise ToolError(f"{path} is a directory") from None
        except OSError as exc:  # e.g. a parent is a regular file, a read-only mount
            raise ToolError(f"cannot write {path}: {exc.strerror or exc}") from None

    def _load(self, path: str, ctx: ToolContext) -> str:
        return self._load_bytes(path, ctx).decode(ENCODING, ERRORS)

    def _read(self, path: str, args: FileArgs, ctx: ToolContext) -> ToolOutput:
        data = self._load_bytes(path, ctx)
        if b"\x00" in data[:8192]:
            return ToolOutput(f"{path} is a binary file ({len(data)} bytes); not shown.")
        if not data:
            return ToolOutput(f"{path} is empty.")
        lines = data.decode(ENCODING, "replace").splitlines()
        offset = args.offset or 1
        limit = args.limit or ctx.config.read_default_lines
        if offset > len(lines):
            raise ToolError(f"offset {offset} is past the end: {path} has {len(lines)} lines.")
        shown = lines[offset - 1 : offset - 1 + limit]
        body = numbered(shown, offset, ctx.config.read_max_line_chars)
        last = offset + len(shown) - 1
        if offset > 1 or last < len(lines):
            more = f"; continue with offset: {last + 1}" if last < len(lines) else ""
            body += f"\n[lines {offset}-{last} of {len(lines)}{more}]"
        return ToolOutput(cap_text(body, ctx.config.max_output_chars))

    def _metadata(self, args: FileArgs, ctx: ToolContext) -> ToolOutput:
        paths = [ctx.resolve_path(path) for path in args.paths or []]
        response = run_helper(ctx, {"op": "metadata", "paths": paths})
        if not response.get("ok"):
            raise ToolError(response.get("error", "metadata failed"))
        return ToolOutput("\n".join(describe_metadata(item) for item in response["results"]))

    def _existing_mode(self, ctx: ToolContext, path: str) -> int:
        """Mode of an existing file (kept on write/edit); 0o644 for new files or without python3."""
        try:
            response = run_helper(ctx, {"op": "metadata", "paths": [path]})
        except ToolError:
            return 0o644
        item = (response.get("results") or [{}])[0]
        if item.get("exists") and item.get("type") == "file":
            return int(item["mode"], 8)
        if item.get("exists") and item.get("type") == "directory":
            raise ToolError(f"{path} is a directory")
        return 0o644


def describe_metadata(item: dict[str, Any]) -> str:
    """One line per path, as shown to the model."""
    path = item["path"]
    if not item.get("exists"):
        return f"{path}: does not exist" + (f" ({item['error']})" if item.get("error") else "")
    parts = [item["type"], f"{item['size']} bytes", f"mode {item['mode']}", f"owner {item['owner']}", f"modified {item['mtime']} UTC"]
    if "lines" in item:
        parts.append(f"{item['lines']} lines")
    if item.get("binary"):
        parts.append("binary")
    if "entries" in item:
        parts.append(f"{item['entries']} entries")
    if "target" in item:
        parts.append(f"-> {item['target']}")
    return f"{path}: " + ", ".join(parts)
