"""Tamper detection: what the agent changed in the sandbox's filesystem, and whether it touched the interpreter.

The changes come from the sandbox itself (:meth:`Sandbox.list_changes
<terminal_agent.interfaces.Sandbox.list_changes>`, restricted to :data:`WATCHED`), so the rules here
work for every backend; whether a path is in the image comes from ``Sandbox.image_has``.
:func:`inspect_changes` is the graders' inspection phase, the same for every grading mode.
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass, field
from collections.abc import Sequence

from terminal_agent.errors import GradingError
from terminal_agent.interfaces import GradingSandbox, PathChange, WatchedPaths

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


def scan_changes(sandbox: GradingSandbox, probe: list[str], prefer_host_read: bool = True) -> ChangeScan:
    """The agent's changes in ``sandbox`` under :data:`WATCHED`, and which of ``probe`` (plus the
    :func:`shadowing_probes` of those changes) the image has."""
    listed = sandbox.list_changes(WATCHED, prefer_host_read=prefer_host_read)
    probes = list(dict.fromkeys(list(probe) + shadowing_probes(list(listed.changes))))
    return ChangeScan(list(listed.changes), listed.source, dict(sandbox.image_has(probes)))


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


# --- programs on PATH ---------------------------------------------------------------------------
PROTECTED_PROGRAMS = ("python", "python3", "python3.*", "bash", "sh", "dash", "env", "pytest", "py.test")
"""Programs whose in-place change or deletion is tampering (tests run them by name; nothing can stand in)."""


@dataclass
class PathShadowing:
    """What the agent did to the programs on the verifier's PATH."""

    signals: list[str] = field(default_factory=list)
    """Tampering: a protected program of the image changed or deleted in place, or a PATH directory replaced."""
    overrides: dict[str, str] = field(default_factory=dict)
    """Program name -> the image's own program, for every image program that a new or changed file
    earlier on PATH now shadows; the verifier's PATH starts with links to these, so the tests run
    what the image had."""


def _bin_dir_index(path: str) -> int | None:
    parent = posixpath.dirname(path)
    return BIN_DIRS.index(parent) if parent in BIN_DIRS else None


def shadowing_probes(changes: list[PathChange]) -> list[str]:
    """Paths whose presence in the image :func:`find_path_shadowing` needs: every PATH dir, for each
    program name the agent added, changed or deleted in one of them."""
    names = {posixpath.basename(c.path) for c in changes if not c.is_dir and _bin_dir_index(c.path) is not None}
    return [posixpath.join(directory, name) for name in sorted(names) for directory in BIN_DIRS]


def find_path_shadowing(scan: ChangeScan, protected: tuple[str, ...] | list[str] = PROTECTED_PROGRAMS) -> PathShadowing:
    """Shadowed and tampered programs on PATH, from ``scan`` probed with :func:`shadowing_probes`."""
    found = PathShadowing()
    by_path = {c.path: c for c in scan.changes}
    for directory in BIN_DIRS:
        change = by_path.get(directory)
        if change is not None and (change.kind == "D" or not change.is_dir):
            found.signals.append(f"{change.kind} {directory} (a directory on PATH replaced)")
    names = sorted({posixpath.basename(c.path) for c in scan.changes if not c.is_dir and _bin_dir_index(c.path) is not None})
    for name in names:
        image_path = next((posixpath.join(d, name) for d in BIN_DIRS if scan.in_image(posixpath.join(d, name))), None)
        if image_path is None:
            continue  # a program the image never had: nothing is shadowed
        is_protected = any(fnmatch.fnmatch(name, pattern) for pattern in protected)
        own = by_path.get(image_path)
        if own is not None and own.kind in ("C", "D") and is_protected:
            found.signals.append(f"{own.kind} {image_path} (a program the tests may run by name)")
            continue
        image_index = BIN_DIRS.index(posixpath.dirname(image_path))
        for earlier in BIN_DIRS[:image_index]:
            shadow = by_path.get(posixpath.join(earlier, name))
            if shadow is not None and shadow.kind in ("A", "C") and not shadow.is_dir:
                found.overrides[name] = image_path
                break
    return found


@dataclass(frozen=True)
class Inspection:
    """What the graders' inspection phase found in the agent's sandbox (before anything of the verifier is staged)."""

    scan: ChangeScan
    interpreter: str
    """The image's own interpreter that runs the verifier."""
    pycache_touched: bool
    """The agent touched the standard library's byte code: the verifier ignores every cached byte code file."""
    shadowing: PathShadowing
    signals: list[str]
    """Tamper signals, deduplicated (none when tamper checking is off)."""


def inspect_changes(sandbox: GradingSandbox, candidates: list[str], *, prefer_host_read: bool, check_tamper: bool,
                    protected: Sequence[str]) -> Inspection:
    """The inspection phase of every grading mode: the agent's changes, the interpreter of the verifier among
    ``candidates``, and the tamper signals of the interpreter and of the ``protected`` programs on PATH."""
    scan = scan_changes(sandbox, candidates, prefer_host_read)
    interpreter = choose_interpreter(scan, candidates)
    signals, pycache_touched = find_tamper_signals(scan, interpreter) if check_tamper else ([], False)
    shadowing = find_path_shadowing(scan, tuple(protected))
    if check_tamper:
        signals += shadowing.signals
    return Inspection(scan, interpreter, pycache_touched, shadowing, list(dict.fromkeys(signals)))
