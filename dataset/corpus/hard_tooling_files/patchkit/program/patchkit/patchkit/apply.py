"""Applying hunks to a text the way ``patch`` does: at the expected line, else at the nearest line where the
hunk's old lines match (an offset), else with up to ``fuzz`` lines of context ignored at each end."""

from __future__ import annotations

from dataclasses import dataclass

from patchkit.hunks import Hunk
from patchkit.lines import Text


class PatchConflict(Exception):
    """A hunk matched nowhere; ``index`` is its 0-based number within the file patch."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


@dataclass
class HunkResult:
    """How one hunk went: where it landed (1-based line in the result), the offset and fuzz it needed."""

    number: int
    applied: bool
    line: int = 0
    offset: int = 0
    fuzz: int = 0

    def describe(self) -> str:
        """The ``patch``-style report line."""
        if not self.applied:
            return f"Hunk #{self.number} FAILED at {self.line}."
        if self.offset == 0 and self.fuzz == 0:
            return f"Hunk #{self.number} succeeded at {self.line}."
        parts = []
        if self.fuzz:
            parts.append(f"with fuzz {self.fuzz}")
        if self.offset:
            plural = "" if abs(self.offset) == 1 else "s"
            parts.append(f"(offset {self.offset} line{plural})")
        return f"Hunk #{self.number} succeeded at {self.line} " + " ".join(parts) + "."


def _matches_at(lines: list[str], position: int, expected: list[str]) -> bool:
    if position < 0 or position + len(expected) > len(lines):
        return False
    return lines[position:position + len(expected)] == expected


def candidate_positions(expected: int, size: int, limit: int) -> list[int]:
    """Positions to try for a block of ``size`` lines in a file of ``limit`` lines: ``expected`` first, then
    ever further away, the later position before the earlier one at each distance."""
    last = limit - size
    positions = []
    if 0 <= expected <= last:
        positions.append(expected)
    for distance in range(1, max(expected, last - expected, 0) + 1):
        for position in (expected + distance, expected - distance):
            if 0 <= position <= last:
                positions.append(position)
    return positions


def find_position(lines: list[str], expected: int, block: list[str]) -> int | None:
    """The position nearest to ``expected`` where ``block`` matches, or None."""
    if not block:
        return expected if 0 <= expected <= len(lines) else None
    for position in candidate_positions(expected, len(block), len(lines)):
        if _matches_at(lines, position, block):
            return position
    return None


def _trimmed(hunk: Hunk, fuzz: int) -> tuple[int, list[str], list[str]]:
    """The hunk's old and new lines without up to ``fuzz`` context lines at each end, and how many were cut at
    the top."""
    top = min(fuzz, hunk.leading_context())
    bottom = min(fuzz, hunk.trailing_context())
    old, new = hunk.old_lines(), hunk.new_lines()
    return top, old[top:len(old) - bottom], new[top:len(new) - bottom]


def apply_hunks(text: Text, hunks: list[Hunk], fuzz: int = 0) -> tuple[Text, list[HunkResult]]:
    """``text`` with every hunk that fits applied, and a result per hunk (failed ones are left out)."""
    lines = list(text.lines)
    final_newline = text.final_newline
    results: list[HunkResult] = []
    shift = 0  # lines added minus lines removed by the hunks applied so far
    offset = 0  # how far the previous hunk landed from where it was expected
    for number, hunk in enumerate(hunks, start=1):
        hunk.check()
        expected = hunk.old_index + shift + offset
        placed = False
        for level in range(0, fuzz + 1):
            top, old, new = _trimmed(hunk, level)
            if level and not top and len(old) == len(hunk.old_lines()):
                continue  # nothing to ignore at this level: same as the level before
            position = find_position(lines, expected + top, old)
            if position is None:
                continue
            touches_end = position + len(old) == len(lines)
            lines[position:position + len(old)] = new
            if touches_end and (hunk.old_no_newline or hunk.new_no_newline):
                final_newline = not hunk.new_no_newline
            offset = position - top - hunk.old_index - shift
            shift += len(new) - len(old)
            results.append(HunkResult(number, True, line=position - top + 1, offset=offset, fuzz=level))
            placed = True
            break
        if not placed:
            results.append(HunkResult(number, False, line=expected + 1))
    if not lines:
        final_newline = True
    return Text(lines, final_newline), results


def reverse_hunk(hunk: Hunk) -> Hunk:
    """The hunk that undoes ``hunk``."""
    swap = {" ": " ", "-": "+", "+": "-"}
    lines = [(swap[kind], text) for kind, text in hunk.lines]
    # Keep deletions before insertions inside each change run, as diff writes them.
    ordered: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    for item in lines + [(" ", None)]:
        if item[0] == " ":
            ordered.extend(sorted(run, key=lambda pair: pair[0] != "-"))
            run = []
            if item[1] is not None:
                ordered.append(item)
        else:
            run.append(item)
    return Hunk(hunk.new_index, hunk.new_length, hunk.old_index, hunk.old_length, ordered,
                old_no_newline=hunk.new_no_newline, new_no_newline=hunk.old_no_newline)
