"""Bookkeeping of bwrap sandboxes, the label-equivalent of Docker's: one state directory per sandbox.

``STATE/sandboxes/<id>/owner.json`` holds the same owner labels as a Docker container (owner
pid/host/start, run id, created, TTL, image; see ``labels.py``) plus the sandbox's process and
cgroups; beside it are the overlay's ``upper``/``work`` dirs and the ``merged`` mount point (mounted
only inside the sandbox's own mount namespace, so it never outlives the sandbox's processes).
:func:`find_leaked` judges records with :func:`labels.judge`; :func:`remove_sandbox_state` kills what
is left, removes the cgroups and the directory. One reaper process per owner (``reaper``) runs
that removal when the owner dies, even by SIGKILL.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.bwrap.limits import remove_cgroups

logger = logging.getLogger(__name__)

STATE_DIR_ENV = "TERMINAL_AGENT_BWRAP_DIR"
OWNER_FILE = "owner.json"
NEW_PREFIX = ".new-"
"""A sandbox directory being made: it gets its record first, then is renamed to its ``bw-`` id."""
UNRECORDED_GRACE_S = 600.0
"""A directory being made that has no record yet is judged leaked only once it is this old (seconds)."""
_REAPERS: dict[str, subprocess.Popen[bytes]] = {}
_REAPER_LOCK = threading.Lock()


def state_root(configured: str | None = None) -> Path:
    """Where bwrap sandboxes keep their state: configured, else ``$TERMINAL_AGENT_BWRAP_DIR``, else the temp dir."""
    return Path(configured or os.environ.get(STATE_DIR_ENV) or os.path.join(tempfile.gettempdir(), "terminal-agent-bwrap"))


def sandboxes_dir(root: Path) -> Path:
    return root / "sandboxes"


def write_record(directory: Path, record: dict[str, Any]) -> None:
    temp = directory / f".{OWNER_FILE}.tmp"
    temp.write_text(json.dumps(record, sort_keys=True))
    os.replace(temp, directory / OWNER_FILE)


def create_sandbox_directory(root: Path, sandbox_id: str, record: dict[str, Any]) -> Path:
    """Make ``sandboxes/<sandbox_id>`` with its record and overlay dirs already inside it.

    The directory is assembled under a ``.new-`` name and renamed into place, so a ``bw-`` directory
    always has a record: another process's sweep (a dead owner's reaper, ``cleanup``) can never take
    a sandbox that is being started for one without an owner.
    """
    base = sandboxes_dir(root)
    base.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f"{NEW_PREFIX}{sandbox_id}-", dir=base))
    try:
        write_record(building, record)
        for part in ("upper", "work", "merged"):
            (building / part).mkdir()
        final = base / sandbox_id
        os.rename(building, final)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return final


def read_record(directory: Path) -> dict[str, Any] | None:
    try:
        record: dict[str, Any] = json.loads((directory / OWNER_FILE).read_text())
        return record
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class LeakedSandbox:
    """A bwrap sandbox whose owner is dead or whose TTL passed."""

    id: str
    directory: Path
    run_id: str
    reason: str


def find_leaked(root: Path | None = None, now: float | None = None) -> list[LeakedSandbox]:
    """State dirs of sandboxes whose owner is gone or TTL passed (nothing is removed)."""
    base = sandboxes_dir(root or state_root())
    leaked: list[LeakedSandbox] = []
    if not base.is_dir():
        return leaked
    clock = time.time() if now is None else now
    for directory in sorted(base.iterdir()):
        record = read_record(directory)
        if record is None:
            # a directory without a record: its start died before writing it, or it is not ours; one
            # still being made (``.new-``) gets a grace period, since its record is being written now
            if directory.name.startswith("bw-"):
                leaked.append(LeakedSandbox(directory.name, directory, "", "no owner record"))
            elif directory.name.startswith(NEW_PREFIX) and _age_s(directory, clock) > UNRECORDED_GRACE_S:
                leaked.append(LeakedSandbox(directory.name, directory, "", "an unfinished start without an owner record"))
            continue
        verdict = sandbox_labels.judge(record.get("labels") or {}, now)
        if verdict.remove:
            leaked.append(LeakedSandbox(directory.name, directory, record["labels"].get(sandbox_labels.RUN_ID, ""), verdict.reason))
    return leaked


def _age_s(directory: Path, now: float) -> float:
    try:
        return now - directory.stat().st_mtime
    except OSError:  # removed meanwhile: nothing to judge
        return 0.0


def _kill_recorded_process(record: dict[str, Any]) -> None:
    pid, start = record.get("pid"), record.get("pid_start")
    if not pid or sandbox_labels.process_start_ticks(int(pid)) != start:
        return  # gone, or the pid now belongs to another process
    for target in (lambda: os.killpg(int(pid), signal.SIGKILL), lambda: os.kill(int(pid), signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass


def remove_sandbox_state(directory: Path) -> bool:
    """Kill the sandbox's recorded process, remove its cgroups and its directory; True when all went."""
    record = read_record(directory) or {}
    _kill_recorded_process(record)
    remove_cgroups(list(record.get("cgroups") or []))
    shutil.rmtree(directory, ignore_errors=True)
    return not directory.exists() and not any(os.path.isdir(g) for g in record.get("cgroups") or [])


def sweep_leaked(root: Path | None = None) -> int:
    """Remove every leaked bwrap sandbox under ``root``; how many were removed."""
    return sum(1 for item in find_leaked(root) if remove_sandbox_state(item.directory))


def ensure_reaper(root: Path) -> None:
    """Start (once per process and state root) the process that cleans this owner's sandboxes after it dies."""
    key = str(root)
    with _REAPER_LOCK:
        running = _REAPERS.get(key)
        if running is not None and running.poll() is None:
            return
        _REAPERS[key] = subprocess.Popen(
            [sys.executable, "-m", "terminal_agent.sandbox.bwrap.reaper", str(os.getpid()), key],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
