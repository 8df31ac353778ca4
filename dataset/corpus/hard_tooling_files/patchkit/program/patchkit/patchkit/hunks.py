"""Changes grouped into hunks with lines of context, the unit of a unified diff."""

from __future__ import annotations

from dataclasses import dataclass, field

from patchkit.lines import Text
from patchkit.myers import opcodes

CONTEXT = " "
DELETE = "-"
INSERT = "+"


@dataclass
class Hunk:
    """A run of changes with the unchanged lines around it.

    ``old_index`` and ``new_index`` are 0-based positions of the hunk's first line in the old and the new file
    (for an empty range: the position where the range sits, i.e. the number of lines before it).
    ``lines`` holds ``(kind, text)`` pairs, ``kind`` one of ``" "``, ``"-"`` and ``"+"``.
    ``old_no_newline`` / ``new_no_newline``: the hunk's last old / new line is the file's last line and has no
    newline at its end."""

    old_index: int
    old_length: int
    new_index: int
    new_length: int
    lines: list[tuple[str, str]] = field(default_factory=list)
    old_no_newline: bool = False
    new_no_newline: bool = False

    def old_lines(self) -> list[str]:
        """The lines this hunk expects to find (context and deletions)."""
        return [text for kind, text in self.lines if kind != INSERT]

    def new_lines(self) -> list[str]:
        """The lines this hunk leaves behind (context and insertions)."""
        return [text for kind, text in self.lines if kind != DELETE]

    def leading_context(self) -> int:
        """How many context lines open the hunk."""
        count = 0
        for kind, _ in self.lines:
            if kind != CONTEXT:
                break
            count += 1
        return count

    def trailing_context(self) -> int:
        """How many context lines close the hunk."""
        count = 0
        for kind, _ in reversed(self.lines):
            if kind != CONTEXT:
                break
            count += 1
        return count

    def check(self) -> None:
        """Raise ValueError when the line counts disagree with the lines."""
        if len(self.old_lines()) != self.old_length or len(self.new_lines()) != self.new_length:
            raise ValueError(f"hunk counts {self.old_length},{self.new_length} do not match its "
                             f"{len(self.old_lines())} old and {len(self.new_lines())} new lines")


def _changes(old: Text, new: Text) -> list[tuple[int, int, int, int]]:
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes(old.tokens(), new.tokens()) if tag != "equal"]


def group_changes(changes: list[tuple[int, int, int, int]], context: int) -> list[list[tuple[int, int, int, int]]]:
    """Changes that are at most ``2 * context`` unchanged lines apart share a hunk."""
    groups: list[list[tuple[int, int, int, int]]] = []
    for change in changes:
        if groups and change[0] - groups[-1][-1][1] <= 2 * context:
            groups[-1].append(change)
        else:
            groups.append([change])
    return groups


def build_hunks(old: Text, new: Text, context: int = 3) -> list[Hunk]:
    """The hunks of a unified diff from ``old`` to ``new`` with ``context`` lines of context."""
    if context < 0:
        raise ValueError("context must be 0 or more lines")
    hunks = []
    for group in group_changes(_changes(old, new), context):
        first, last = group[0], group[-1]
        lead = min(context, first[0])
        trail = min(context, len(old) - last[1])
        old_start, old_end = first[0] - lead, last[1] + trail
        new_start, new_end = first[2] - lead, last[3] + trail
        lines: list[tuple[str, str]] = []
        i = old_start
        for i1, i2, j1, j2 in group:
            lines.extend((CONTEXT, old.lines[k]) for k in range(i, i1))
            lines.extend((DELETE, old.lines[k]) for k in range(i1, i2))
            lines.extend((INSERT, new.lines[k]) for k in range(j1, j2))
            i = i2
        lines.extend((CONTEXT, old.lines[k]) for k in range(i, old_end))
        hunk = Hunk(old_start, old_end - old_start, new_start, new_end - new_start, lines,
                    old_no_newline=not old.final_newline and old_end == len(old) and old_end > old_start,
                    new_no_newline=not new.final_newline and new_end == len(new) and new_end > new_start)
        hunk.check()
        hunks.append(hunk)
    return hunks
