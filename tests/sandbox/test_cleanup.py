"""Label-scoped cleanup: only our labelled objects with a dead owner or a passed TTL are removed."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from terminal_agent.sandbox import labels
from terminal_agent.sandbox.cleanup import CleanupDaemon, find_leaked, sweep_leaked
from terminal_agent.sandbox.docker.sandbox import docker_client

pytestmark = pytest.mark.serial  # leaves or sweeps leaked sandboxes machine-wide: runs alone (scripts/test.sh)


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _labels(run_id: str, **overrides: str) -> dict[str, str]:
    values = labels.owner_labels(run_id, ttl_s=3600)
    values.update(overrides)
    return values


# --- the verdicts (no daemon) -------------------------------------------------------------------
def test_judge_keeps_live_owner_and_unlabelled():
    assert labels.judge(_labels("r")).remove is False
    assert labels.judge({"com.example": "x"}).remove is False
    assert labels.judge({labels.MANAGED: "false", labels.OWNER_PID: str(_dead_pid())}).remove is False


def test_judge_removes_dead_reused_and_expired():
    dead = labels.judge(_labels("r", **{labels.OWNER_PID: str(_dead_pid())}))
    assert dead.remove and "gone" in dead.reason
    reused = labels.judge(_labels("r", **{labels.OWNER_START: "1"}))  # our pid, another start time
    assert reused.remove and "reused" in reused.reason
    expired = labels.judge(_labels("r", **{labels.CREATED_AT: str(time.time() - 7200)}))
    assert expired.remove and "TTL" in expired.reason


def test_judge_other_host_only_by_ttl():
    foreign = _labels("r", **{labels.OWNER_HOST: socket.gethostname() + "-elsewhere", labels.OWNER_PID: str(_dead_pid())})
    assert labels.judge(foreign).remove is False
    foreign[labels.CREATED_AT] = str(time.time() - 7200)
    assert labels.judge(foreign).remove is True


# --- against the daemon ---------------------------------------------------------------------------
@pytest.fixture
def leak_set(base_image):
    """A leaked labelled container/network/volume, a live-owner one, and unlabelled ones."""
    api = docker_client().api
    run_id = f"test-cleanup-{time.time_ns()}"
    dead = _labels(run_id, **{labels.OWNER_PID: str(_dead_pid())})
    alive = _labels(run_id)

    def container(label_set: dict[str, str] | None) -> str:
        cid = api.create_container(base_image, command=["sleep", "600"], labels=label_set or {"test": run_id},
                                   host_config=api.create_host_config(network_mode="none"))["Id"]
        api.start(cid)
        return cid

    ids = {
        "dead_container": container(dead),
        "alive_container": container(alive),
        "foreign_container": container(None),
    }
    for name, label_set in (("dead", dead), ("foreign", {"test": run_id})):
        net = api.create_network(f"{run_id}-{name}", labels=label_set)["Id"]
        vol = api.create_volume(f"{run_id}-{name}", labels=label_set)["Name"]
        ids[f"{name}_network"] = net
        ids[f"{name}_volume"] = vol
    yield ids
    for key, object_id in ids.items():
        try:
            if key.endswith("container"):
                api.remove_container(object_id, force=True)
            elif key.endswith("network"):
                api.remove_network(object_id)
            else:
                api.remove_volume(object_id, force=True)
        except Exception:  # noqa: BLE001 - already removed by the test
            pass


def _exists(kind: str, object_id: str) -> bool:
    api = docker_client().api
    if kind == "container":
        return bool(api.containers(all=True, filters={"id": object_id}))
    if kind == "network":
        return any(n["Id"] == object_id for n in api.networks())
    return any(v["Name"] == object_id for v in (api.volumes() or {}).get("Volumes") or [])


@pytest.mark.docker
def test_sweep_removes_only_leaked_labelled_objects(leak_set):
    listed = {obj.id for obj in find_leaked()}
    assert {leak_set["dead_container"], leak_set["dead_network"], leak_set["dead_volume"]} <= listed
    assert not listed & {leak_set["alive_container"], leak_set["foreign_container"], leak_set["foreign_network"], leak_set["foreign_volume"]}

    dry = sweep_leaked(dry_run=True)
    assert leak_set["dead_container"] in {obj.id for obj in dry}
    assert _exists("container", leak_set["dead_container"]), "dry run removed something"

    removed = {obj.id for obj in sweep_leaked()}
    assert {leak_set["dead_container"], leak_set["dead_network"], leak_set["dead_volume"]} <= removed
    assert not _exists("container", leak_set["dead_container"])
    assert not _exists("network", leak_set["dead_network"])
    assert not _exists("volume", leak_set["dead_volume"])
    for survivor in ("alive_container", "foreign_container"):
        assert _exists("container", leak_set[survivor]), f"{survivor} was removed"
    assert _exists("network", leak_set["foreign_network"])
    assert _exists("volume", leak_set["foreign_volume"])


@pytest.mark.docker
def test_cli_lists_by_default_and_removes_with_apply(leak_set):
    from terminal_agent.cli import app

    runner = CliRunner()
    listed = runner.invoke(app, ["cleanup"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    assert leak_set["dead_container"][:12] in listed.output and "--apply" in listed.output
    assert _exists("container", leak_set["dead_container"])
    applied = runner.invoke(app, ["cleanup", "--apply"], env={"COLUMNS": "200"})
    assert applied.exit_code == 0, applied.output
    assert not _exists("container", leak_set["dead_container"])
    assert _exists("container", leak_set["foreign_container"])
    assert _exists("container", leak_set["alive_container"])


@pytest.mark.docker
def test_daemon_sweeps_periodically(leak_set):
    with CleanupDaemon(interval_s=0.2) as daemon:
        deadline = time.monotonic() + 10
        while _exists("container", leak_set["dead_container"]):
            assert time.monotonic() < deadline, "daemon did not remove the leaked container"
            time.sleep(0.1)
    assert daemon.sweeps >= 1 and daemon.removed >= 1
    assert _exists("container", leak_set["foreign_container"])


def test_a_backend_that_cannot_be_reached_is_skipped_and_said_so(tmp_path):
    """No Docker daemon here (DOCKER_HOST names no socket): the other backends are still checked and swept."""
    import json
    import os

    leaked_dir = tmp_path / "sandboxes" / "bw-000000000009"
    leaked_dir.mkdir(parents=True)
    (leaked_dir / "owner.json").write_text(json.dumps({"labels": _labels("test-unreachable", **{labels.OWNER_PID: str(_dead_pid())}), "cgroups": []}))
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock", "COLUMNS": "250"}
    command = [sys.executable, "-m", "terminal_agent", "cleanup", "--bwrap-dir", str(tmp_path)]
    listed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "docker: not checked (no Docker daemon answers" in " ".join(listed.stdout.split())
    assert "bw-000000000009" in listed.stdout and leaked_dir.exists()
    applied = subprocess.run([*command, "--apply"], env=env, capture_output=True, text=True, timeout=120)
    assert applied.returncode == 0 and "removed 1 object(s)" in applied.stdout, applied.stdout + applied.stderr
    assert not leaked_dir.exists()
