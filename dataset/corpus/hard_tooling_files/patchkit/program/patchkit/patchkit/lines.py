"""Text as a list of lines, remembering whether the last line ended with a newline."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Text:
    """The lines of a file without their newline characters.

    ``final_newline`` is False when the file's last line has no newline at its end (an empty file has no
    last line and counts as ending with one)."""

    lines: list[str] = field(default_factory=list)
    final_newline: bool = True

    def __len__(self) -> int:
        return len(self.lines)

    def tokens(self) -> list[object]:
        """The lines as comparison tokens: a last line without a newline differs from the same line with one."""
        tokens: list[object] = list(self.lines)
        if tokens and not self.final_newline:
            tokens[-1] = (tokens[-1], "no-newline")
        return tokens


def split_lines(data: str) -> Text:
    """``data`` as a :class:`Text`. Only ``\\n`` ends a line; a ``\\r`` stays part of the line."""
    if data == "":
        return Text([], True)
    parts = data.split("\n")
    if parts[-1] == "":
        parts.pop()
        return Text(parts, True)
    return Text(parts, False)


def join_lines(text: Text) -> str:
    """The inverse of :func:`split_lines`."""
    if not text.lines:
        return ""
    joined = "\n".join(text.lines)
    return joined + "\n" if text.final_newline else joined


def read_text(path: str | Path) -> Text:
    """The file at ``path`` as a :class:`Text` (UTF-8; undecodable bytes are kept through surrogate escapes)."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as handle:
        return split_lines(handle.read())


def write_text(path: str | Path, text: Text) -> None:
    """Write ``text`` to ``path``, creating its parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
        handle.write(join_lines(text))
