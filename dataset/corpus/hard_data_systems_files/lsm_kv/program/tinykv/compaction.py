"""Compaction: merge several segments into one, so that lookups read fewer files and dead entries go away.

A compaction merges a run of the NEWEST segments (``newest``), or all of them. Only the newest version of each
key is kept. A tombstone still hides older versions of its key in segments that are not part of the merge, so
tombstones may only be dropped when the merge reaches down to the oldest segment of the store.
"""

import os
from dataclasses import dataclass

from .codec import is_tombstone
from .merge import merge_newest
from .segment import Segment, write_segment


@dataclass
class CompactionPlan:
    inputs: list
    """Segment names to merge, oldest first (a run at the newest end of the manifest)."""
    drop_tombstones: bool


@dataclass
class CompactionResult:
    output: str | None
    """The new segment's name; None when nothing was left to write."""
    inputs: list
    entries_written: int
    tombstones_dropped: int
    versions_dropped: int


def plan_compaction(manifest, newest=None):
    """Which segments to merge: the ``newest`` newest ones (all when None). None when there is nothing to do."""
    segments = list(manifest.segments)
    if newest is not None:
        if newest < 2:
            raise ValueError(f"a compaction merges at least 2 segments, not {newest}")
        segments = segments[-newest:]
    if len(segments) < 2:
        return None
    return CompactionPlan(segments, drop_tombstones=segments[0] == manifest.segments[0])


def run_compaction(directory, manifest, plan):
    """Merge ``plan.inputs`` into a new segment and return what happened (the manifest is not saved here)."""
    readers = [Segment(os.path.join(directory, name)) for name in plan.inputs]
    total = sum(reader.entry_count for reader in readers)
    merged = []
    tombstones_dropped = 0
    for key, seq, value in merge_newest(reader.entries() for reader in reversed(readers)):
        if is_tombstone(value) and plan.drop_tombstones:
            tombstones_dropped += 1
            continue
        merged.append((key, seq, value))
    output = None
    if merged:
        output = manifest.new_segment_name()
        write_segment(os.path.join(directory, output), merged)
    return CompactionResult(output, list(plan.inputs), len(merged), tombstones_dropped,
                            total - len(merged) - tombstones_dropped)


def apply_compaction(manifest, result):
    """Replace the inputs by the output in ``manifest.segments`` (in place), keeping the order."""
    first = manifest.segments.index(result.inputs[0])
    remaining = [name for name in manifest.segments if name not in result.inputs]
    if result.output is not None:
        remaining.insert(first, result.output)
    manifest.segments = remaining
