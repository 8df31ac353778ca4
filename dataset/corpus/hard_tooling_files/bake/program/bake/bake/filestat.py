"""What bake knows about files on disk: modification times (read once per run) and content hashes."""

from __future__ import annotations

import hashlib
import os
import threading


class FileStat:
    """Modification times and content digests of files under ``root``, cached for the run.

    ``forget`` drops what is cached about a file (after a recipe rewrote it)."""

    def __init__(self, root: str):
        self.root = root
        self._mtimes: dict[str, float | None] = {}
        self._digests: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def mtime(self, name: str) -> float | None:
        """The file's modification time in nanoseconds, or None when it does not exist."""
        with self._lock:
            if name not in self._mtimes:
                try:
                    self._mtimes[name] = os.stat(self.path(name)).st_mtime_ns
                except FileNotFoundError:
                    self._mtimes[name] = None
            return self._mtimes[name]

    def exists(self, name: str) -> bool:
        return self.mtime(name) is not None

    def digest(self, name: str) -> str | None:
        """The SHA-256 of the file's bytes (of its listing, for a folder), or None when it does not exist."""
        with self._lock:
            if name not in self._digests:
                self._digests[name] = _digest(self.path(name))
            return self._digests[name]

    def forget(self, name: str) -> None:
        with self._lock:
            self._mtimes.pop(name, None)
            self._digests.pop(name, None)


def _digest(path: str) -> str | None:
    if os.path.isdir(path):
        return hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except FileNotFoundError:
        return None
