"""Resource limits of a bwrap sandbox: a cgroup (v2, else v1) where one is writable, rlimits otherwise.

:func:`make_limits` returns :class:`AppliedLimits`: the cgroup directories the sandbox's first
process joins (through their ``cgroup.procs``), the directories to show inside the sandbox at
``/sys/fs/cgroup`` (so its shell server reads its own OOM counter as under Docker), the address-space
rlimit used when no cgroup can be had, and ``mechanism``, which says what applied and is recorded
in the sandbox's ``server_info``.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from terminal_agent.errors import SandboxUnavailableError
from terminal_agent.tasks.model import TaskLimits

logger = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_NAME = "terminal-agent"
_V2_CONTROLLERS = ("memory", "pids", "cpu")
_CPU_PERIOD_US = 100_000


@dataclass
class AppliedLimits:
    """What limits one sandbox got, and how."""

    mechanism: str
    """``cgroup-v2``, ``cgroup-v1`` or ``rlimit``."""
    cgroup_dirs: list[str] = field(default_factory=list)
    """Cgroup directories the sandbox runs in (removed by :func:`remove_cgroups`)."""
    inside_binds: dict[str, str] = field(default_factory=dict)
    """Host cgroup directory -> where it is bound read-only inside the sandbox."""
    address_space_kb: int | None = None
    """``ulimit -v`` of the sandbox (the rlimit fallback of the memory limit)."""
    enforced: dict[str, str] = field(default_factory=dict)
    """memory / pids / cpu -> how each is enforced (``none`` when it is not)."""


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _v2_usable() -> bool:
    controllers = CGROUP_ROOT / "cgroup.controllers"
    if not controllers.is_file():
        return False
    have = controllers.read_text().split()
    return all(name in have for name in _V2_CONTROLLERS) and os.access(CGROUP_ROOT, os.W_OK)


def _v2_limits(sandbox_id: str, limits: TaskLimits) -> AppliedLimits:
    parent = CGROUP_ROOT / GROUP_NAME
    parent.mkdir(exist_ok=True)
    wanted = " ".join(f"+{name}" for name in _V2_CONTROLLERS)
    enabled = (CGROUP_ROOT / "cgroup.subtree_control").read_text().split()
    if not all(name in enabled for name in _V2_CONTROLLERS):
        _write(CGROUP_ROOT / "cgroup.subtree_control", wanted)
    if not all(name in (parent / "cgroup.subtree_control").read_text().split() for name in _V2_CONTROLLERS):
        _write(parent / "cgroup.subtree_control", wanted)
    group = parent / sandbox_id
    group.mkdir()
    try:
        if limits.memory_mb is not None:  # None: the task names no limit (a new group's memory.max is "max")
            _write(group / "memory.max", str(int(limits.memory_mb) * 1024 * 1024))
        if (group / "memory.swap.max").exists():
            _write(group / "memory.swap.max", "0")
        _write(group / "pids.max", str(int(limits.pids)))
        if limits.cpus is not None:
            _write(group / "cpu.max", f"{max(1000, int(limits.cpus * _CPU_PERIOD_US))} {_CPU_PERIOD_US}")
    except OSError:
        remove_cgroups([str(group)])
        raise
    return AppliedLimits(
        "cgroup-v2", [str(group)], {str(group): "/sys/fs/cgroup"},
        enforced={"memory": "cgroup-v2", "pids": "cgroup-v2", "cpu": "cgroup-v2"},
    )


def _v1_usable() -> bool:
    return all(os.access(CGROUP_ROOT / name, os.W_OK) for name in ("memory", "pids", "cpu"))


def _v1_limits(sandbox_id: str, limits: TaskLimits) -> AppliedLimits:
    made: list[str] = []
    try:
        groups = {}
        for controller in ("memory", "pids", "cpu"):
            group = CGROUP_ROOT / controller / GROUP_NAME / sandbox_id
            group.mkdir(parents=True)
            made.append(str(group))
            groups[controller] = group
        if limits.memory_mb is not None:  # None: the task names no limit
            memory = int(limits.memory_mb) * 1024 * 1024
            _write(groups["memory"] / "memory.limit_in_bytes", str(memory))
            if (groups["memory"] / "memory.memsw.limit_in_bytes").exists():
                _write(groups["memory"] / "memory.memsw.limit_in_bytes", str(memory))
        _write(groups["pids"] / "pids.max", str(int(limits.pids)))
        if limits.cpus is not None:
            _write(groups["cpu"] / "cpu.cfs_period_us", str(_CPU_PERIOD_US))
            _write(groups["cpu"] / "cpu.cfs_quota_us", str(max(1000, int(limits.cpus * _CPU_PERIOD_US))))
    except OSError:
        remove_cgroups(made)
        raise
    binds = {str(groups["memory"]): "/sys/fs/cgroup/memory", str(groups["pids"]): "/sys/fs/cgroup/pids"}
    return AppliedLimits("cgroup-v1", made, binds, enforced={"memory": "cgroup-v1", "pids": "cgroup-v1", "cpu": "cgroup-v1"})


def _rlimits(limits: TaskLimits) -> AppliedLimits:
    # root ignores RLIMIT_NPROC and no rlimit shares CPU: only the memory limit is enforced
    return AppliedLimits(
        "rlimit", address_space_kb=int(limits.memory_mb) * 1024 if limits.memory_mb is not None else None,
        enforced={"memory": "rlimit-as", "pids": "none", "cpu": "none"},
    )


def make_limits(sandbox_id: str, limits: TaskLimits, mode: str = "auto") -> AppliedLimits:
    """Limits for a new sandbox (``mode``: auto, cgroup or rlimit; see ``sandbox.bwrap.limits``)."""
    if mode != "rlimit":
        for usable, make in ((_v2_usable, _v2_limits), (_v1_usable, _v1_limits)):
            if not usable():
                continue
            try:
                return make(sandbox_id, limits)
            except OSError as exc:
                logger.info("cgroup limits not applicable (%s); trying the next way", exc)
        if mode == "cgroup":
            raise SandboxUnavailableError("sandbox.bwrap.limits is 'cgroup' but no cgroup (v2 or v1) is writable here")
    return _rlimits(limits)


def remove_cgroups(cgroup_dirs: list[str]) -> None:
    """Kill what is left in each cgroup and remove it; quiet (a cgroup already gone is fine)."""
    for group in cgroup_dirs:
        path = Path(group)
        for _ in range(50):
            try:
                pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                break
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
        for _ in range(20):
            try:
                path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)
