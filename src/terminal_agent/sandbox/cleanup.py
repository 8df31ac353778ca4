"""Removal of leaked sandboxes, over every registered backend: only objects carrying our labels or owner records.

An object is leaked when its owner process is gone (same host: pid missing, or reused by a
process that started at another time) or its TTL passed (any host); each backend lists and removes
its own through its ``list_leaked`` / ``sweep_leaked`` hooks (``terminal_agent.sandbox.backends``),
so nothing here names a backend. ``sweep_leaked()`` runs at the start of every run; ``CleanupDaemon``
repeats it in a thread; ``terminal-agent cleanup`` is the manual form (:func:`scan_leaked`).
A backend that cannot be reached here (no Docker daemon on a bwrap node) is skipped and said so.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from terminal_agent.errors import SandboxUnavailableError
from terminal_agent.sandbox.backends import SANDBOX_BACKENDS, LeakedObject, get_backend
from terminal_agent.sandbox.config import SandboxConfig

__all__ = ["CleanupDaemon", "LeakScan", "LeakedObject", "find_leaked", "remove_leaked", "scan_leaked", "sweep_leaked"]

logger = logging.getLogger(__name__)


@dataclass
class LeakScan:
    """What one pass over the backends found."""

    leaked: list[LeakedObject] = field(default_factory=list)
    """Objects whose owner is dead or whose TTL passed, backend by backend."""
    unreachable: dict[str, str] = field(default_factory=dict)
    """Backend name -> why it could not be checked here (its ``SandboxUnavailableError``)."""


def _names(backends: Iterable[str] | None) -> list[str]:
    return list(SANDBOX_BACKENDS.names() if backends is None else backends)


def scan_leaked(
    config: SandboxConfig | None = None, *, backends: Iterable[str] | None = None, now: float | None = None
) -> LeakScan:
    """List (remove nothing) the leaked objects of ``backends`` (default: every registered one)."""
    config = config or SandboxConfig()
    scan = LeakScan()
    for name in _names(backends):
        try:
            scan.leaked += get_backend(name).list_leaked(config, now)
        except SandboxUnavailableError as exc:  # boundary: a backend without its service here is reported, not fatal
            scan.unreachable[name] = str(exc)
            logger.debug("leaks of the %s backend not checked: %s", name, exc)
    return scan


def find_leaked(
    config: SandboxConfig | None = None, *, backends: Iterable[str] | None = None, now: float | None = None
) -> list[LeakedObject]:
    """The leaked objects of ``backends`` (default: all) that can be checked here; nothing is removed."""
    return scan_leaked(config, backends=backends, now=now).leaked


def remove_leaked(leaked: Iterable[LeakedObject], config: SandboxConfig | None = None) -> list[LeakedObject]:
    """Remove these listed objects, each through its own backend's ``sweep_leaked``; those removed."""
    config = config or SandboxConfig()
    by_backend: dict[str, list[LeakedObject]] = {}
    for obj in leaked:
        by_backend.setdefault(obj.backend, []).append(obj)
    removed: list[LeakedObject] = []
    for name, objects in by_backend.items():
        try:
            removed += get_backend(name).sweep_leaked(config, objects)
        except SandboxUnavailableError as exc:  # boundary: its service went away since the listing
            logger.warning("could not remove %d leaked object(s) of the %s backend: %s", len(objects), name, exc)
    return removed


def sweep_leaked(
    config: SandboxConfig | None = None,
    *,
    backends: Iterable[str] | None = None,
    dry_run: bool = False,
    now: float | None = None,
) -> list[LeakedObject]:
    """Remove (or with ``dry_run`` only list) the leaked objects of ``backends`` (default: every registered one).

    Each backend sweeps its own (Docker: containers first, so that networks and volumes free up); one that
    cannot be reached here is skipped.
    """
    config = config or SandboxConfig()
    if dry_run:
        return find_leaked(config, backends=backends, now=now)
    removed: list[LeakedObject] = []
    for name in _names(backends):
        try:
            removed += get_backend(name).sweep_leaked(config, None, now)
        except SandboxUnavailableError as exc:  # boundary: as in scan_leaked
            logger.debug("leaks of the %s backend not swept: %s", name, exc)
    if removed:
        logger.info("removed %d leaked sandbox object(s)", len(removed))
    return removed


class CleanupDaemon:
    """Runs :func:`sweep_leaked` every ``interval_s`` seconds (default: ``SandboxConfig.cleanup_interval_s``, 120) in a daemon thread."""

    def __init__(
        self, interval_s: float | None = None, *, config: SandboxConfig | None = None,
        backends: Iterable[str] | None = None,
    ) -> None:
        self.config = config or SandboxConfig()
        self.interval_s = self.config.cleanup_interval_s if interval_s is None else interval_s
        self.backends = None if backends is None else list(backends)
        """The backends swept; None: every registered one at each sweep."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sweeps = 0
        """Completed sweeps."""
        self.removed = 0
        """Objects removed over all sweeps."""

    def start(self) -> "CleanupDaemon":
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="sandbox-cleanup", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> "CleanupDaemon":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.removed += len(sweep_leaked(self.config, backends=self.backends))
            except Exception as exc:  # noqa: BLE001 - the daemon must keep running through daemon hiccups
                logger.warning("cleanup sweep failed: %s", exc)
            self.sweeps += 1
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))
