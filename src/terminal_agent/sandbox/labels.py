"""The labels every container (network, volume) of terminal-agent carries, and who owns it.

Ownership is ``(host, pid, process start time)``: a pid alone can be reused after the owner died,
so the start time (``/proc/PID/stat`` field 22, in clock ticks since boot) is compared too.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass

PREFIX = "terminal-agent"
MANAGED = f"{PREFIX}.managed"
RUN_ID = f"{PREFIX}.run-id"
OWNER_PID = f"{PREFIX}.owner-pid"
OWNER_HOST = f"{PREFIX}.owner-host"
OWNER_START = f"{PREFIX}.owner-start"
CREATED_AT = f"{PREFIX}.created-at"
TTL_S = f"{PREFIX}.ttl-s"
IMAGE = f"{PREFIX}.image"

MANAGED_FILTER = {"label": [f"{MANAGED}=true"]}
"""Engine API filter that selects only our objects."""


def process_start_ticks(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot, or None when no such process exists."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # the command name (field 2) may contain spaces and parentheses: split after the last ')'
    fields = stat[stat.rindex(b")") + 2 :].split()
    return int(fields[19])


def owner_labels(run_id: str, ttl_s: float, image: str = "") -> dict[str, str]:
    """Labels for an object created now by this process."""
    pid = os.getpid()
    return {
        MANAGED: "true",
        RUN_ID: run_id,
        OWNER_PID: str(pid),
        OWNER_HOST: socket.gethostname(),
        OWNER_START: str(process_start_ticks(pid) or 0),
        CREATED_AT: f"{time.time():.3f}",
        TTL_S: f"{ttl_s:.0f}",
        IMAGE: image,
    }


@dataclass(frozen=True)
class Verdict:
    """Whether a labelled object should be removed, and why."""

    remove: bool
    reason: str


def judge(labels: dict[str, str], now: float | None = None) -> Verdict:
    """Decide from an object's labels whether its owner is gone or its TTL passed.

    Objects without ``terminal-agent.managed=true`` are never removed.
    """
    if (labels or {}).get(MANAGED) != "true":
        return Verdict(False, "not ours")
    now = time.time() if now is None else now
    try:
        created = float(labels.get(CREATED_AT, "0"))
        ttl = float(labels.get(TTL_S, "0"))
    except ValueError:
        created, ttl = 0.0, 0.0
    if ttl > 0 and created > 0 and now > created + ttl:
        return Verdict(True, f"TTL of {ttl:.0f} s passed")
    if labels.get(OWNER_HOST) != socket.gethostname():
        return Verdict(False, f"owned by another host ({labels.get(OWNER_HOST)}); only its TTL applies")
    try:
        pid = int(labels.get(OWNER_PID, ""))
    except ValueError:
        return Verdict(True, "owner pid label is malformed")
    started = process_start_ticks(pid)
    if started is None:
        return Verdict(True, f"owner pid {pid} is gone")
    recorded = labels.get(OWNER_START, "0")
    if recorded not in ("", "0") and str(started) != recorded:
        return Verdict(True, f"owner pid {pid} was reused by another process")
    return Verdict(False, f"owner pid {pid} is alive")
