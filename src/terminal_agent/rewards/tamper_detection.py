"""Tamper detection: what the agent changed in the sandbox's filesystem, and whether it touched the interpreter.

The changes come from the sandbox itself (:meth:`Sandbox.list_changes
<terminal_agent.interfaces.Sandbox.list_changes>`, restricted to :data:`WATCHED`), so the rules here
work for every backend; whether a path is in the image comes from ``Sandbox.image_has``.
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.errors import GradingError
from terminal_agent.interfaces import PathChange, WatchedPaths

_STDLIB_TREES = ("/usr/lib/python3.*", "/usr/local/lib/python3.*")
_PACKAGE_DIRS = ("site-packages", "dist-packages")
BIN_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
"""The directories of the verifier's PATH, in its order."""
# Only these parts of the filesystem matter to the verifier; the walk skips the rest, so an agent
# that wrote 100k files into /app or dist-packages costs the grader nothing.
WATCHED = WatchedPaths(trees=BIN_DIRS + _STDLIB_TREES, files_in=("/etc",), skip_dir_names=_PACKAGE_DIRS)

Change = PathChange
"""The record of one change (kept under its old name)."""


@dataclass
class ChangeScan:
    """Every change the agent made, where they were read from, and which probed paths the image has."""

    changes: list[PathChange]
    source: str
    """``upperdir`` (layers read directly) or ``diff`` (an API listing)."""
    image_paths: dict[str, bool] = field(default_factory=dict)
    """Probed path -> whether the image has it; a path not probed is unknown."""

    def in_image(self, path: str) -> bool | None:
        """Whether ``path`` exists in the image; ``None`` when it was not probed."""
        return self.image_paths.get(path)


def scan_changes(sandbox: Any, probe: list[str], prefer_host_read: bool = True) -> ChangeScan:
    """The agent's changes in ``sandbox`` under :data:`WATCHED`, and which of ``probe`` the image has."""
    listed = sandbox.list_changes(WATCHED, prefer_host_read=prefer_host_read)
    return ChangeScan(list(listed.changes), listed.source, dict(sandbox.image_has(list(probe))))


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
