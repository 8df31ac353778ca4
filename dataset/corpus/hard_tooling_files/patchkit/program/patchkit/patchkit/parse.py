"""Reading unified diffs: one :class:`FilePatch` per ``---``/``+++`` pair, each with its hunks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from patchkit.format import NO_NEWLINE_MARKER
from patchkit.hunks import CONTEXT, DELETE, INSERT, Hunk

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
DEV_NULL = "/dev/null"


class PatchSyntaxError(ValueError):
    """The patch text is not a well-formed unified diff; the message names the line."""

    def __init__(self, line_number: int, message: str):
        super().__init__(f"malformed patch at line {line_number}: {message}")
        self.line_number = line_number


@dataclass
class FilePatch:
    """The changes to one file. ``old_path``/``new_path`` are the header names (``/dev/null`` for none)."""

    old_path: str
    new_path: str
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def creates(self) -> bool:
        return self.old_path == DEV_NULL

    @property
    def deletes(self) -> bool:
        return self.new_path == DEV_NULL


def _header_name(line: str) -> str:
    """The file name of a ``---``/``+++`` line: up to a tab (a timestamp follows it), quotes removed."""
    name = line[4:].split("\t", 1)[0].rstrip("\r")
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]
    return name


def parse_range(start: str, length: str | None) -> tuple[int, int]:
    """A header range as ``(0-based index, length)``; the length defaults to 1.

    An empty range is named by the line before it, so its index is the start itself."""
    count = 1 if length is None else int(length)
    index = int(start) - 1
    if count == 0:
        index = int(start)
    return max(index, 0), count


def _read_hunk(lines: list[str], at: int, header: re.Match[str]) -> tuple[Hunk, int]:
    old_index, old_length = parse_range(header.group(1), header.group(2))
    new_index, new_length = parse_range(header.group(3), header.group(4))
    hunk = Hunk(old_index, old_length, new_index, new_length)
    old_seen = new_seen = 0
    n = at + 1
    while n < len(lines) and (old_seen < old_length or new_seen < new_length):
        line = lines[n]
        if line.startswith("\\"):
            n += 1
            continue
        kind, text = (line[0], line[1:]) if line else (CONTEXT, "")
        if kind not in (CONTEXT, DELETE, INSERT):
            raise PatchSyntaxError(n + 1, f"unexpected line {line!r} inside a hunk")
        if kind != INSERT:
            old_seen += 1
        if kind != DELETE:
            new_seen += 1
        if old_seen > old_length or new_seen > new_length:
            raise PatchSyntaxError(n + 1, "the hunk has more lines than its header says")
        hunk.lines.append((kind, text))
        n += 1
        if n < len(lines) and lines[n] == NO_NEWLINE_MARKER:
            if kind != INSERT:
                hunk.old_no_newline = True
            if kind != DELETE:
                hunk.new_no_newline = True
            n += 1
    if old_seen != old_length or new_seen != new_length:
        raise PatchSyntaxError(at + 1, f"the hunk ends after {old_seen} old and {new_seen} new lines, its header "
                                       f"says {old_length} and {new_length}")
    return hunk, n


def parse_patch(text: str) -> list[FilePatch]:
    """Every file patch in ``text``; lines outside ``---``/``+++``/hunks (``diff`` commands, comments) are skipped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    patches: list[FilePatch] = []
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith("--- ") and n + 1 < len(lines) and lines[n + 1].startswith("+++ "):
            patches.append(FilePatch(_header_name(line), _header_name(lines[n + 1])))
            n += 2
            continue
        header = HUNK_HEADER.match(line)
        if header:
            if not patches:
                raise PatchSyntaxError(n + 1, "a hunk before any '---'/'+++' file header")
            hunk, n = _read_hunk(lines, n, header)
            patches[-1].hunks.append(hunk)
            continue
        n += 1
    for patch in patches:
        if not patch.hunks and not (patch.creates or patch.deletes):
            raise PatchSyntaxError(0, f"the patch of {patch.new_path} has no hunks")
    return patches


def strip_path(name: str, components: int) -> str:
    """``name`` without its first ``components`` slash-separated components (``patch -p``)."""
    if components <= 0:
        return name
    parts = name.split("/")
    if len(parts) <= components:
        raise ValueError(f"cannot strip {components} components from {name!r}")
    return "/".join(parts[components:])
