"""Writing hunks as a unified diff (the format of ``diff -u`` and ``git diff``)."""

from __future__ import annotations

from patchkit.hunks import CONTEXT, DELETE, INSERT, Hunk, build_hunks
from patchkit.lines import Text

NO_NEWLINE_MARKER = "\\ No newline at end of file"


def format_range(index: int, length: int) -> str:
    """One side of a hunk header: ``start,length`` with a 1-based start.

    An empty range is named by the line before it (0 at the top of the file); a length of 1 is left out."""
    start = index + 1
    if length == 0:
        start = index
    if length == 1:
        return f"{start}"
    return f"{start},{length}"


def hunk_header(hunk: Hunk) -> str:
    """The ``@@ -a,b +c,d @@`` line of ``hunk``."""
    return f"@@ -{format_range(hunk.old_index, hunk.old_length)} +{format_range(hunk.new_index, hunk.new_length)} @@"


def format_hunk(hunk: Hunk) -> list[str]:
    """The lines of ``hunk`` (header first), with the no-newline marker after the file's unterminated last line."""
    out = [hunk_header(hunk)]
    last_old = max((n for n, (kind, _) in enumerate(hunk.lines) if kind != INSERT), default=-1)
    last_new = max((n for n, (kind, _) in enumerate(hunk.lines) if kind != DELETE), default=-1)
    for n, (kind, text) in enumerate(hunk.lines):
        if kind not in (CONTEXT, DELETE, INSERT):
            raise ValueError(f"unknown hunk line kind {kind!r}")
        out.append(kind + text)
        if (n == last_old and hunk.old_no_newline) or (n == last_new and hunk.new_no_newline):
            out.append(NO_NEWLINE_MARKER)
    return out


def unified_diff(old: Text, new: Text, old_label: str, new_label: str, context: int = 3) -> str:
    """The unified diff from ``old`` to ``new``, or ``""`` when they are the same."""
    hunks = build_hunks(old, new, context)
    if not hunks:
        return ""
    out = [f"--- {old_label}", f"+++ {new_label}"]
    for hunk in hunks:
        out.extend(format_hunk(hunk))
    return "\n".join(out) + "\n"
