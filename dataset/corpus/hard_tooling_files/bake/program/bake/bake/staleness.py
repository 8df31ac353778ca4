"""Deciding whether a target must be rebuilt.

Timestamp mode (the default): a phony target always runs; a target is out of date when it does not exist, when a
prerequisite is newer than it, or when a prerequisite was rebuilt earlier in this run (whatever time the rebuilt
file carries; under ``-n`` "rebuilt" means "would be rebuilt").

Hash mode (``--hash``): a target is out of date when it does not exist, when nothing is recorded for it, when its
recipe's signature changed, or when a prerequisite's content differs from the content recorded at its last build.
A prerequisite rebuilt to the very same bytes does not make its dependents stale; under ``-n`` a prerequisite that
would be rebuilt counts as changed.

Order-only prerequisites never make a target out of date.
"""

from __future__ import annotations

from dataclasses import dataclass

from bake.filestat import FileStat
from bake.graph import Node
from bake.state import BuildState


@dataclass
class Verdict:
    """Whether to run the recipe, and why (for ``--explain``)."""

    stale: bool
    reason: str


def timestamp_verdict(node: Node, stats: FileStat, rebuilt: set[str]) -> Verdict:
    if node.phony:
        return Verdict(True, "it is phony")
    if node.source:
        return Verdict(False, "it is a source file")
    own = stats.mtime(node.name)
    if own is None:
        return Verdict(True, "it does not exist")
    for prerequisite in node.prerequisites:
        if prerequisite in rebuilt:
            return Verdict(True, f"prerequisite '{prerequisite}' was rebuilt")
        other = stats.mtime(prerequisite)
        if other is None:
            return Verdict(True, f"prerequisite '{prerequisite}' does not exist")
        if other > own:
            return Verdict(True, f"prerequisite '{prerequisite}' is newer")
    return Verdict(False, "it is up to date")


def hash_verdict(node: Node, stats: FileStat, state: BuildState, signature: str, rebuilt: set[str],
                 dry_run: bool) -> Verdict:
    if node.phony:
        return Verdict(True, "it is phony")
    if node.source:
        return Verdict(False, "it is a source file")
    if not stats.exists(node.name):
        return Verdict(True, "it does not exist")
    record = state.get(node.name)
    if record is None:
        return Verdict(True, "no build of it is recorded")
    if record.get("recipe") != signature:
        return Verdict(True, "its recipe changed")
    inputs = record.get("inputs", {})
    for prerequisite in node.prerequisites:
        if dry_run and prerequisite in rebuilt:
            return Verdict(True, f"prerequisite '{prerequisite}' would be rebuilt")
        if prerequisite not in inputs:
            return Verdict(True, f"prerequisite '{prerequisite}' is new")
        if stats.digest(prerequisite) != inputs[prerequisite]:
            return Verdict(True, f"prerequisite '{prerequisite}' changed")
    return Verdict(False, "it is up to date")
