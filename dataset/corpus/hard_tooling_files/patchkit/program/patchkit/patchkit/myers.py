"""The shortest edit script between two sequences (Myers, "An O(ND) Difference Algorithm", 1986).

:func:`opcodes` turns it into runs in the shape of :mod:`difflib`'s opcodes: ``(tag, i1, i2, j1, j2)`` with
``tag`` one of ``equal``, ``delete``, ``insert`` or ``replace``, covering both sequences in order.
"""

from __future__ import annotations

from typing import Sequence

Move = tuple[str, int, int]
"""One step of an edit script: ``("=", i, j)`` keeps a[i] == b[j], ``("-", i, j)`` deletes a[i] (j is where
b stands), ``("+", i, j)`` inserts b[j] (i is where a stands)."""


def _common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def _common_suffix(a: Sequence[object], b: Sequence[object], prefix: int) -> int:
    n = 0
    limit = min(len(a), len(b)) - prefix
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def _trace(a: Sequence[object], b: Sequence[object]) -> list[dict[int, int]]:
    """The furthest-reaching x of every diagonal k, saved at the start of each round d."""
    n, m = len(a), len(b)
    v: dict[int, int] = {1: 0}
    trace: list[dict[int, int]] = []
    for d in range(n + m + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[k - 1] < v[k + 1]):
                x = v[k + 1]
            else:
                x = v[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[k] = x
            if x >= n and y >= m:
                return trace
    raise AssertionError("the edit graph has no path to its corner")


def _backtrack(trace: list[dict[int, int]], n: int, m: int) -> list[Move]:
    moves: list[Move] = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        if k == -d or (k != d and v.get(k - 1, -1) < v.get(k + 1, -1)):
            prev_k = k + 1
        else:
            prev_k = k - 1
        prev_x = v[prev_k]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            moves.append(("=", x - 1, y - 1))
            x -= 1
            y -= 1
        if d > 0:
            if x == prev_x:
                moves.append(("+", x, y - 1))
            else:
                moves.append(("-", x - 1, y))
        x, y = prev_x, prev_y
    moves.reverse()
    return moves


def edit_script(a: Sequence[object], b: Sequence[object]) -> list[Move]:
    """A shortest list of moves turning ``a`` into ``b`` (deletions before insertions where both fit)."""
    prefix = _common_prefix(a, b)
    suffix = _common_suffix(a, b, prefix)
    middle_a = a[prefix:len(a) - suffix]
    middle_b = b[prefix:len(b) - suffix]
    moves: list[Move] = [("=", i, i) for i in range(prefix)]
    if middle_a or middle_b:
        trace = _trace(middle_a, middle_b)
        for kind, i, j in _backtrack(trace, len(middle_a), len(middle_b)):
            moves.append((kind, i + prefix, j + prefix))
    moves.extend(("=", len(a) - suffix + i, len(b) - suffix + i) for i in range(suffix))
    return moves


def distance(a: Sequence[object], b: Sequence[object]) -> int:
    """The number of deletions plus insertions in a shortest edit script."""
    return sum(1 for kind, _, _ in edit_script(a, b) if kind != "=")


def opcodes(a: Sequence[object], b: Sequence[object]) -> list[tuple[str, int, int, int, int]]:
    """The edit script as runs: equal runs, and between them one change run (delete, insert or replace)."""
    result: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    pending_i, pending_j = 0, 0
    changed = False
    for kind, _, _ in edit_script(a, b):
        if kind == "=":
            if changed:
                result.append((_tag(i - pending_i, j - pending_j), pending_i, i, pending_j, j))
                changed = False
            if result and result[-1][0] == "equal":
                tag, i1, _, j1, _ = result.pop()
                result.append(("equal", i1, i + 1, j1, j + 1))
            else:
                result.append(("equal", i, i + 1, j, j + 1))
            i += 1
            j += 1
            continue
        if not changed:
            pending_i, pending_j = i, j
            changed = True
        if kind == "-":
            i += 1
        else:
            j += 1
    if changed:
        result.append((_tag(i - pending_i, j - pending_j), pending_i, i, pending_j, j))
    return result


def _tag(deleted: int, inserted: int) -> str:
    if deleted and inserted:
        return "replace"
    return "delete" if deleted else "insert"
