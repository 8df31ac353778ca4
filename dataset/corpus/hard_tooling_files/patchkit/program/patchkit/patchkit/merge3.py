"""Three-way merge: combine the changes two sides made to a common base, marking the places where they clash.

Each side's changes are the change runs of its diff against the base. Changes of the two sides that overlap form
one region. Two changes overlap when their base ranges share a line, and also when they merely touch: one ends
where the other starts (so two insertions at the same place overlap, and so do edits of adjacent lines, as in
git). A region changed by one side takes that side's text; a region changed by both sides takes their text when
both made the same change, and is a conflict otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from patchkit.lines import Text
from patchkit.myers import opcodes

MINE, THEIRS = 0, 1


@dataclass
class Change:
    """One side's replacement of ``base[start:end]`` by ``lines``."""

    side: int
    start: int
    end: int
    lines: list[str]


@dataclass
class Region:
    """A stretch of the merge result: unchanged base lines, a clean change, or a conflict."""

    base_start: int
    base_end: int
    lines: list[str] = field(default_factory=list)
    conflict: bool = False
    mine: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)
    base: list[str] = field(default_factory=list)


def side_changes(base: Text, other: Text, side: int) -> list[Change]:
    """The change runs of ``other`` against ``base``, as changes of ``side``."""
    return [Change(side, i1, i2, other.lines[j1:j2])
            for tag, i1, i2, j1, j2 in opcodes(base.tokens(), other.tokens()) if tag != "equal"]


def _cluster(changes: list[Change]) -> list[list[Change]]:
    """Changes sorted by base position, grouped into overlapping (or touching) clusters."""
    ordered = sorted(changes, key=lambda change: (change.start, change.end, change.side))
    clusters: list[list[Change]] = []
    cluster_end = -1
    for change in ordered:
        if clusters and change.start <= cluster_end:
            clusters[-1].append(change)
            cluster_end = max(cluster_end, change.end)
        else:
            clusters.append([change])
            cluster_end = change.end
    return clusters


def _side_text(base: Text, start: int, end: int, changes: list[Change]) -> list[str]:
    """``base[start:end]`` with ``changes`` (of one side, inside the range) applied."""
    out: list[str] = []
    at = start
    for change in sorted(changes, key=lambda c: (c.start, c.end)):
        out.extend(base.lines[at:change.start])
        out.extend(change.lines)
        at = change.end
    out.extend(base.lines[at:end])
    return out


def merge_regions(base: Text, mine: Text, theirs: Text) -> list[Region]:
    """The merge as regions covering the base in order."""
    changes = side_changes(base, mine, MINE) + side_changes(base, theirs, THEIRS)
    regions: list[Region] = []
    at = 0
    for cluster in _cluster(changes):
        start = min(change.start for change in cluster)
        end = max(change.end for change in cluster)
        if at < start:
            regions.append(Region(at, start, base.lines[at:start]))
        mine_changes = [c for c in cluster if c.side == MINE]
        theirs_changes = [c for c in cluster if c.side == THEIRS]
        mine_text = _side_text(base, start, end, mine_changes)
        theirs_text = _side_text(base, start, end, theirs_changes)
        if not theirs_changes:
            regions.append(Region(start, end, mine_text))
        elif not mine_changes:
            regions.append(Region(start, end, theirs_text))
        elif mine_text == theirs_text:
            regions.append(Region(start, end, mine_text))
        else:
            regions.append(Region(start, end, conflict=True, mine=mine_text, theirs=theirs_text,
                                  base=base.lines[start:end]))
        at = end
    if at < len(base.lines):
        regions.append(Region(at, len(base.lines), base.lines[at:]))
    return regions


@dataclass
class MergeResult:
    """The merged text (with conflict markers) and the number of conflicts."""

    text: Text
    conflicts: int


def merge(base: Text, mine: Text, theirs: Text, labels: tuple[str, str, str] = ("mine", "base", "theirs"),
          show_base: bool = False) -> MergeResult:
    """Merge ``mine`` and ``theirs``, both descended from ``base``.

    A conflict is written as ``<<<<<<< MINE``, mine's lines, (with ``show_base``: ``||||||| BASE`` and the base
    lines), ``=======``, theirs' lines, ``>>>>>>> THEIRS``."""
    out: list[str] = []
    conflicts = 0
    for region in merge_regions(base, mine, theirs):
        if not region.conflict:
            out.extend(region.lines)
            continue
        conflicts += 1
        out.append(f"<<<<<<< {labels[0]}")
        out.extend(region.mine)
        if show_base:
            out.append(f"||||||| {labels[1]}")
            out.extend(region.base)
        out.append("=======")
        out.extend(region.theirs)
        out.append(f">>>>>>> {labels[2]}")
    final_newline = _final_newline(base, mine, theirs)
    return MergeResult(Text(out, final_newline if out else True), conflicts)


def _final_newline(base: Text, mine: Text, theirs: Text) -> bool:
    """The side that changed the final newline wins; when both did, they agree or mine wins."""
    if mine.final_newline != base.final_newline:
        return mine.final_newline
    return theirs.final_newline
