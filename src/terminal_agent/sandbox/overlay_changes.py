"""The agent's changes read from an overlay filesystem's upper directory, and lookups in its lower layers.

Shared by the backends whose root filesystem is an overlay this host can read: Docker's overlay2
(when this process runs beside the daemon) and bwrap's own overlay.
"""

from __future__ import annotations

import os
import posixpath

from terminal_agent.interfaces import PathChange, WatchedPaths

_FILE_TYPE = 0o170000
_CHAR_DEVICE = 0o020000
_OPAQUE_XATTRS = ("trusted.overlay.opaque", "user.overlay.opaque")


def in_layers(lower_dirs: list[str], path: str) -> bool:
    """Whether ``path`` exists (a symlink counts) in any of ``lower_dirs`` and no upper layer hides it.

    Layers are ordered top first; a whiteout in a higher layer hides the path below it.
    """
    for lower in lower_dirs:
        full = lower + path
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if (st.st_mode & _FILE_TYPE) == _CHAR_DEVICE and st.st_rdev == 0:
            return False  # whiteout: deleted by this layer
        return True
    return False


def _is_opaque(path: str) -> bool:
    for name in _OPAQUE_XATTRS:
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def walk_upper_dir(upper: str, lower_dirs: list[str], watched: WatchedPaths) -> list[PathChange]:
    """Every change recorded in the overlay upper dir ``upper``, descending only where ``watched`` says."""
    changes: list[PathChange] = []
    for root, dirs, files in os.walk(upper):
        rel_root = "/" + os.path.relpath(root, upper).lstrip(".").lstrip("/")
        for name in dirs + files:
            full = os.path.join(root, name)
            path = posixpath.join(rel_root, name)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if (st.st_mode & _FILE_TYPE) == _CHAR_DEVICE and st.st_rdev == 0:  # overlay whiteout
                changes.append(PathChange(path, "D"))
                continue
            existed = in_layers(lower_dirs, path)
            is_dir = os.path.isdir(full) and not os.path.islink(full)
            if is_dir:
                if not existed or _is_opaque(full):
                    changes.append(PathChange(path, "A" if not existed else "C", True))
                continue
            changes.append(PathChange(path, "C" if existed else "A"))
        dirs[:] = [d for d in dirs if watched.descends(posixpath.join(rel_root, d))]  # recurse only where it matters
    return changes
