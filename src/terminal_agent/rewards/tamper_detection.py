"""Tamper detection: what the agent changed in the container's filesystem, and whether it touched the interpreter.

The changes come from the overlay upper dir when this host can read it (only the parts of the
filesystem that matter to the verifier are walked), else from ``docker diff`` through the API.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

import docker

from terminal_agent.errors import GradingError

_STDLIB_TREES = ("/usr/lib/python3.*", "/usr/local/lib/python3.*")
_PACKAGE_DIRS = ("site-packages", "dist-packages")
# Only these parts of the filesystem matter to the verifier; the walk skips the rest, so an agent
# that wrote 100k files into /app or dist-packages costs the grader nothing.
_WATCHED_TREES = ("/usr/bin", "/usr/local/bin") + _STDLIB_TREES
_WATCHED_FILES_IN = ("/etc",)


@dataclass
class Change:
    """One path the agent added, changed or deleted, relative to the image."""

    path: str
    kind: str
    """``A`` added, ``C`` changed, ``D`` deleted."""
    is_dir: bool = False


@dataclass
class ChangeScan:
    """Every change the agent made, where they were read from, and the image's layers when readable."""

    changes: list[Change]
    source: str
    """``upperdir`` (read on the host) or ``diff`` (``docker diff`` through the API)."""
    lower_dirs: list[str] = field(default_factory=list)

    def in_image(self, path: str) -> bool | None:
        """Whether ``path`` exists in the image; ``None`` when the layers cannot be read."""
        if not self.lower_dirs:
            return None
        return _in_layers(self.lower_dirs, path)


def _in_layers(lower_dirs: list[str], path: str) -> bool:
    return any(os.path.lexists(lower + path) for lower in lower_dirs)


def scan_changes(
    api: docker.APIClient, container_id: str, info: dict[str, Any] | None = None, use_upper_dir: bool = True
) -> ChangeScan:
    """The agent's filesystem changes: the overlay upper dir when this host can read it, else ``docker diff``."""
    info = info or api.inspect_container(container_id)
    graph = info.get("GraphDriver") or {}
    data = graph.get("Data") or {}
    upper = data.get("UpperDir")
    if use_upper_dir and graph.get("Name") == "overlay2" and upper and os.path.isdir(upper):
        lowers = [d for d in (data.get("LowerDir") or "").split(":") if d]
        return ChangeScan(_walk_upper(upper, lowers), "upperdir", lowers)
    entries = api.diff(container_id) or []
    kinds = {0: "C", 1: "A", 2: "D"}
    parents = {posixpath.dirname(e["Path"]) for e in entries}
    return ChangeScan([Change(e["Path"], kinds.get(e["Kind"], "C"), e["Path"] in parents) for e in entries], "diff")


def _watched_dir(path: str) -> bool:
    parts = path.strip("/").split("/")
    for pattern in _WATCHED_TREES + _WATCHED_FILES_IN:
        pattern_parts = pattern.strip("/").split("/")
        shared = min(len(parts), len(pattern_parts))
        if not all(fnmatch.fnmatch(parts[i], pattern_parts[i]) for i in range(shared)):
            continue
        if len(parts) <= len(pattern_parts):
            return True  # an ancestor of a watched place, or the place itself
        if pattern in _WATCHED_TREES and not any(part in _PACKAGE_DIRS for part in parts[len(pattern_parts):]):
            return True
    return False


def _walk_upper(upper: str, lowers: list[str]) -> list[Change]:
    changes: list[Change] = []
    for root, dirs, files in os.walk(upper):
        rel_root = "/" + os.path.relpath(root, upper).lstrip(".").lstrip("/")
        for name in dirs + files:
            full = os.path.join(root, name)
            path = posixpath.join(rel_root, name)
            st = os.lstat(full)
            if (st.st_mode & 0o170000) == 0o020000 and st.st_rdev == 0:  # overlay whiteout
                changes.append(Change(path, "D"))
                continue
            existed = _in_layers(lowers, path)
            is_dir = os.path.isdir(full) and not os.path.islink(full)
            if is_dir:
                opaque = False
                try:
                    opaque = os.getxattr(full, "trusted.overlay.opaque", follow_symlinks=False) == b"y"
                except OSError:
                    pass
                if not existed or opaque:
                    changes.append(Change(path, "A" if not existed else "C", True))
                continue
            changes.append(Change(path, "C" if existed else "A"))
        dirs[:] = [d for d in dirs if _watched_dir(posixpath.join(rel_root, d))]  # recurse only where it matters
    return changes


def _under_stdlib(path: str) -> bool:
    parts = path.strip("/").split("/")
    if len(parts) < 3:
        return False
    root = "/" + "/".join(parts[:3])
    if not any(fnmatch.fnmatch(root, pattern) for pattern in _STDLIB_TREES):
        return False
    return not any(part in _PACKAGE_DIRS for part in parts[3:])


def find_tamper_signals(scan: ChangeScan, interpreter: str) -> tuple[list[str], bool]:
    """(tamper signals, stdlib bytecode touched) for the changes in ``scan``.

    Signals: the chosen interpreter or any ``python3*`` next to it changed or deleted, anything
    changed, added or deleted in the interpreter's standard library (packages dirs excepted),
    ``/etc/ld.so.preload`` present, or a directory on the interpreter's path replaced.
    Bytecode (``__pycache__``) in the standard library is not a signal: the verifier then ignores
    every cached bytecode file (``-X pycache_prefix``) instead.
    """
    signals: list[str] = []
    pycache_touched = False
    bin_dir = posixpath.dirname(interpreter)
    ancestors = set()
    current = bin_dir
    while current not in ("/", ""):
        ancestors.add(current)
        current = posixpath.dirname(current)
    for change in scan.changes:
        path = change.path
        if path == "/etc/ld.so.preload" and change.kind != "D":
            signals.append(f"{change.kind} {path} (preloads a library into every process)")
        elif posixpath.dirname(path) == bin_dir and posixpath.basename(path).startswith("python3"):
            if change.kind != "A":
                signals.append(f"{change.kind} {path} (interpreter)")
        elif _under_stdlib(path):
            if "__pycache__" in path.split("/"):
                pycache_touched = True
            elif not change.is_dir or change.kind != "C":
                signals.append(f"{change.kind} {path} (standard library)")
        elif path in ancestors and (change.kind == "D" or not change.is_dir):
            signals.append(f"{change.kind} {path} (directory on the interpreter's path replaced)")
    return signals, pycache_touched


def choose_interpreter(scan: ChangeScan, candidates: list[str]) -> str:
    added = {c.path for c in scan.changes if c.kind == "A"}
    for candidate in candidates:
        shipped = scan.in_image(candidate)
        if shipped is None:
            if candidate not in added:
                return candidate
        elif shipped:
            return candidate
    raise GradingError(f"the task image ships none of {candidates}: the verifier needs a python3")
