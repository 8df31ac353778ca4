"""The bwrap state directory's bookkeeping without a sandbox: how a directory being made is judged.

A sandbox directory is assembled under a ``.new-`` name with its owner record, then renamed to its
``bw-`` id, so another process's sweep (a dead owner's reaper, ``terminal-agent cleanup``) cannot
take it for a record-less leak while it is being started.
"""

from __future__ import annotations

import os
import subprocess
import time

from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.bwrap import state as bwrap_state

IMAGE = "terminal-agent/base:bookworm"


def _record(owner_pid: int | None = None) -> dict:
    labels = sandbox_labels.owner_labels("test-bwrap-state", 3600, IMAGE)
    if owner_pid is not None:
        labels[sandbox_labels.OWNER_PID] = str(owner_pid)
    return {"labels": labels, "cgroups": []}


def _dead_pid() -> int:
    dead = subprocess.Popen(["true"])
    dead.wait()
    return dead.pid


def test_a_made_directory_has_its_record_and_overlay_dirs_and_no_leftovers(tmp_path):
    directory = bwrap_state.create_sandbox_directory(tmp_path, "bw-00000000000a", _record())
    assert directory == bwrap_state.sandboxes_dir(tmp_path) / "bw-00000000000a"
    assert bwrap_state.read_record(directory)["labels"][sandbox_labels.RUN_ID] == "test-bwrap-state"
    assert sorted(p.name for p in directory.iterdir()) == ["merged", "owner.json", "upper", "work"]
    assert [p.name for p in bwrap_state.sandboxes_dir(tmp_path).iterdir()] == ["bw-00000000000a"]
    assert bwrap_state.find_leaked(tmp_path) == []  # its owner (this process) is alive


def test_an_unfinished_start_is_left_alone_until_its_grace_passes(tmp_path):
    building = bwrap_state.sandboxes_dir(tmp_path) / f"{bwrap_state.NEW_PREFIX}bw-00000000000b-x1"
    (building / "upper").mkdir(parents=True)  # no record yet: it is being written by its owner now
    assert bwrap_state.find_leaked(tmp_path) == []
    assert bwrap_state.sweep_leaked(tmp_path) == 0 and building.is_dir()
    old = time.time() - bwrap_state.UNRECORDED_GRACE_S - 60
    os.utime(building, (old, old))
    leaked = bwrap_state.find_leaked(tmp_path)
    assert [item.directory for item in leaked] == [building] and "unfinished start" in leaked[0].reason
    assert bwrap_state.sweep_leaked(tmp_path) == 1 and not building.exists()


def test_an_unfinished_start_of_a_dead_owner_goes_at_once(tmp_path):
    building = bwrap_state.sandboxes_dir(tmp_path) / f"{bwrap_state.NEW_PREFIX}bw-00000000000c-x2"
    building.mkdir(parents=True)
    bwrap_state.write_record(building, _record(owner_pid=_dead_pid()))
    alive = bwrap_state.sandboxes_dir(tmp_path) / f"{bwrap_state.NEW_PREFIX}bw-00000000000d-x3"
    alive.mkdir()
    bwrap_state.write_record(alive, _record())
    assert [item.directory for item in bwrap_state.find_leaked(tmp_path)] == [building]
    assert bwrap_state.sweep_leaked(tmp_path) == 1 and alive.is_dir()


def test_a_bw_directory_without_a_record_is_still_a_leak(tmp_path):
    broken = bwrap_state.sandboxes_dir(tmp_path) / "bw-00000000000e"
    (broken / "upper").mkdir(parents=True)
    assert [(item.directory, item.reason) for item in bwrap_state.find_leaked(tmp_path)] == [(broken, "no owner record")]
