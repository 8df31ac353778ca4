"""A task's disk quota (``limits.storage_mb``) in the sandboxes, as the host's ``sandbox.storage`` policy says.

* ``enforce`` (the default): a kernel quota where the backend has one (Docker's ``storage_opt size`` on a storage
  driver that supports it: overlay2 on xfs with ``pquota``, btrfs, zfs, devicemapper); else a *measured* quota:
  the sandbox's writable layer is measured at the end of each agent turn, and a sandbox over its quota ends the
  episode as :attr:`~terminal_agent.outcome.Termination.STORAGE_LIMIT` (the agent's doing, graded as it stands).
* ``refuse``: a kernel quota or nothing: a task with a quota the backend cannot hold in the kernel is refused
  before anything starts (:class:`~terminal_agent.errors.StorageQuotaRefusedError`, naming the task).
* ``ignore``: no quota, as Harbor 0.25's own Docker environment.

A measured quota cannot stop a write: within one turn an agent may write past it (the turn ends, then the episode).
Measuring walks the writable layer (its cost grows with the number of files in it), so a watch spends at most
``sandbox.storage_measure_share`` of the wall clock on it: after a walk of ``t`` seconds the next one waits until
``t / share`` has passed, and a turn ending earlier reuses the last figure. docs/sandbox.md "Disk quota".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from terminal_agent.errors import StorageQuotaRefusedError

StoragePolicy = Literal["enforce", "refuse", "ignore"]
"""What the sandboxes do with a task's disk quota (``SandboxConfig.storage``)."""

StorageEnforcement = Literal["kernel", "measured", "none"]
"""How one sandbox holds its task's quota: by the kernel, by measuring, or not at all."""

MIB = 1024 * 1024


@dataclass(frozen=True)
class StorageUsage:
    """One measurement of a sandbox's writable layer against its task's quota."""

    used_bytes: int
    """Bytes the agent's changes take: disk blocks of the overlay upper dir (``upperdir``, hard links once), or
    the daemon's ``SizeRw`` (``size_rw``: apparent sizes) where the layer is not on this host."""
    quota_bytes: int
    """The task's quota (``limits.storage_mb`` MiB)."""
    source: str
    """How it was measured: ``upperdir`` or ``size_rw``."""
    measured_s: float = 0.0
    """What the measurement cost (seconds)."""

    @property
    def exceeded(self) -> bool:
        """Whether the layer is over the quota."""
        return self.used_bytes > self.quota_bytes

    def describe(self) -> str:
        """One line for logs and ``info``: used, quota, how measured."""
        return (f"the sandbox's writable layer holds {self.used_bytes / MIB:.1f} MiB, "
                f"{'over' if self.exceeded else 'within'} the task's disk quota of {self.quota_bytes / MIB:.0f} MiB "
                f"(limits.storage_mb; measured from {self.source})")

    def as_info(self) -> dict[str, object]:
        """The JSON-safe record an episode's ``info`` carries."""
        return {"used_bytes": self.used_bytes, "quota_bytes": self.quota_bytes, "source": self.source,
                "exceeded": self.exceeded}


def directory_disk_bytes(path: str) -> int:
    """Disk blocks (``st_blocks`` x 512) of everything under ``path``, the directories included and each hard-linked
    file once, as ``du -s -B1`` counts; entries that vanish during the walk are skipped. 0 when ``path`` is gone."""
    total = 0
    seen: set[tuple[int, int]] = set()
    pending = [path]
    while pending:
        directory = pending.pop()
        try:
            entries = os.scandir(directory)
        except OSError:  # removed (or made unreadable) while walking: nothing of it to count
            continue
        with entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if st.st_nlink > 1 and not is_dir:
                    key = (st.st_dev, st.st_ino)
                    if key in seen:
                        continue
                    seen.add(key)
                total += st.st_blocks * 512
                if is_dir:
                    pending.append(entry.path)
    return total


class StorageWatch:
    """A sandbox's measured quota: :meth:`check` measures its writable layer, within the time share it may use."""

    def __init__(self, quota_mb: int, measure: Callable[[], tuple[int, str]], share: float = 0.1) -> None:
        self.quota_bytes = int(quota_mb) * MIB
        self._measure = measure
        self._share = share
        self._next_at = 0.0
        self._lock = threading.Lock()
        self.last: StorageUsage | None = None
        """The latest measurement (None before the first)."""
        self.measurements = 0
        """How many walks were made (the others reused :attr:`last`)."""

    def check(self) -> StorageUsage:
        """The layer's usage now, or the last measurement when the time share says to wait (never before the
        first). Raises what the measuring function raises (``SandboxError`` when the sandbox is broken)."""
        with self._lock:
            now = time.monotonic()
            if self.last is not None and now < self._next_at:
                return self.last
            used, source = self._measure()
            cost = time.monotonic() - now
            self._next_at = now + cost / self._share
            self.measurements += 1
            self.last = StorageUsage(int(used), self.quota_bytes, source, cost)
            return self.last


@runtime_checkable
class StorageWatchedSandbox(Protocol):
    """A sandbox that can tell whether it is over its task's disk quota (Docker, bwrap, Ray)."""

    def check_storage(self) -> StorageUsage | None:
        """Its writable layer against a measured quota; None when no quota is measured (none asked, the policy
        ignores it, or the kernel holds it). Raises ``SandboxError`` when broken."""
        ...


def storage_over_quota(sandbox: object) -> StorageUsage | None:
    """The usage of ``sandbox`` when it is over its measured quota; None otherwise (or when it measures none)."""
    if not isinstance(sandbox, StorageWatchedSandbox):
        return None
    usage = sandbox.check_storage()
    return usage if usage is not None and usage.exceeded else None


def storage_enforcement(quota_mb: int | None, policy: StoragePolicy, *, kernel: bool | None, backend: str,
                        why_no_kernel: str) -> StorageEnforcement:
    """How a sandbox holds ``quota_mb`` under ``policy``: ``kernel`` when the backend can (``kernel`` True, or
    None: not known yet, try it), ``measured`` otherwise under ``enforce``, ``none`` without a quota or under
    ``ignore``. Under ``refuse`` without a kernel quota raises :class:`StorageQuotaRefusedError` saying why
    (``why_no_kernel``)."""
    if quota_mb is None or policy == "ignore":
        return "none"
    if kernel is not False:
        return "kernel"
    if policy == "refuse":
        raise StorageQuotaRefusedError(refusal_message(quota_mb, backend, why_no_kernel))
    return "measured"


def refusal_message(quota_mb: int, backend: str, why_no_kernel: str) -> str:
    """Why a task with a ``quota_mb`` disk quota is refused, and what to set instead."""
    return (f"its disk quota (limits.storage_mb = {quota_mb} MiB) cannot be held by a kernel quota on the "
            f"{backend} backend here ({why_no_kernel}), and sandbox.storage = 'refuse' refuses it; set "
            "sandbox.storage = 'enforce' to measure it at each turn's end, or 'ignore' to run without a quota")


def naming_task(exc: StorageQuotaRefusedError, task_id: str | None) -> StorageQuotaRefusedError:
    """``exc`` with the task named first (a backend refuses before it knows which task the image is of)."""
    if not task_id or str(exc).startswith(f"task {task_id}:"):
        return exc
    return StorageQuotaRefusedError(f"task {task_id}: {exc}")
