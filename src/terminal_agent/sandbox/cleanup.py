"""Removal of leaked sandboxes: only objects carrying ``terminal-agent.managed=true``.

An object is leaked when its owner process is gone (same host: pid missing, or reused by a
process that started at another time) or its TTL passed (any host). Objects without our label
are never listed, so they can never be removed. ``sweep_leaked()`` runs at the start of every run;
``CleanupDaemon`` repeats it in a thread; ``terminal-agent cleanup`` is the manual form.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

import docker
import docker.errors

from terminal_agent.errors import DockerNotAvailableError
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.connection import docker_client

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeakedObject:
    """One labelled container, network or volume, or one bwrap sandbox, that cleanup would remove."""

    kind: str
    """``container``, ``network``, ``volume`` or ``bwrap``."""
    id: str
    name: str
    run_id: str
    reason: str


def find_leaked(client: docker.DockerClient | None = None, now: float | None = None) -> list[LeakedObject]:
    """Our labelled objects whose owner is dead or whose TTL passed (nothing is removed)."""
    api = (client or docker_client()).api
    leaked: list[LeakedObject] = []
    for container in api.containers(all=True, filters=sandbox_labels.MANAGED_FILTER):
        labels = container.get("Labels") or {}
        verdict = sandbox_labels.judge(labels, now)
        if verdict.remove:
            names = container.get("Names") or [""]
            leaked.append(
                LeakedObject("container", container["Id"], names[0].lstrip("/"), labels.get(sandbox_labels.RUN_ID, ""), verdict.reason)
            )
    for network in api.networks(filters=sandbox_labels.MANAGED_FILTER):
        labels = network.get("Labels") or {}
        verdict = sandbox_labels.judge(labels, now)
        if verdict.remove:
            leaked.append(
                LeakedObject("network", network["Id"], network.get("Name", ""), labels.get(sandbox_labels.RUN_ID, ""), verdict.reason)
            )
    for volume in (api.volumes(filters=sandbox_labels.MANAGED_FILTER) or {}).get("Volumes") or []:
        labels = volume.get("Labels") or {}
        verdict = sandbox_labels.judge(labels, now)
        if verdict.remove:
            leaked.append(
                LeakedObject("volume", volume["Name"], volume["Name"], labels.get(sandbox_labels.RUN_ID, ""), verdict.reason)
            )
    return leaked


def remove_object(api: docker.APIClient, obj: LeakedObject) -> bool:
    """Remove one leaked object; False when it could not be removed (already gone counts as removed)."""
    try:
        if obj.kind == "container":
            api.remove_container(obj.id, force=True, v=True)
        elif obj.kind == "network":
            api.remove_network(obj.id)
        elif obj.kind == "volume":
            api.remove_volume(obj.id, force=True)
        else:
            raise ValueError(f"unknown kind {obj.kind!r}")
    except docker.errors.NotFound:
        return True
    except docker.errors.APIError as exc:
        if obj.kind == "container" and exc.status_code == 409:  # removal already in progress
            return True
        logger.warning("could not remove %s %s: %s", obj.kind, obj.id[:12], exc)
        return False
    return True


def _leaked_bwrap(dry_run: bool, now: float | None) -> list[LeakedObject]:
    """bwrap sandboxes of dead owners under the default state dir (removed unless ``dry_run``)."""
    from terminal_agent.sandbox.bwrap import state as bwrap_state

    found = bwrap_state.find_leaked(bwrap_state.state_root(), now)
    return [
        LeakedObject("bwrap", item.id, str(item.directory), item.run_id, item.reason)
        for item in found
        if dry_run or bwrap_state.remove_sandbox_state(item.directory)
    ]


def sweep_leaked(
    client: docker.DockerClient | None = None, *, dry_run: bool = False, now: float | None = None
) -> list[LeakedObject]:
    """Remove (or with ``dry_run`` only list) leaked objects; containers go first so networks and volumes free up.

    bwrap sandboxes of dead owners (default state dir) are swept too; without a ``client`` and
    without a Docker daemon (a node that runs only bwrap) only they are.
    """
    bwrap_leaked = _leaked_bwrap(dry_run, now)
    if client is None:
        try:
            client = docker_client()
        except DockerNotAvailableError:
            if bwrap_leaked:
                logger.info("removed %d leaked bwrap sandbox(es); no Docker daemon to sweep", len(bwrap_leaked))
            return bwrap_leaked
    leaked = find_leaked(client, now)
    if dry_run:
        return leaked + bwrap_leaked
    removed = bwrap_leaked + [obj for obj in leaked if remove_object(client.api, obj)]
    if removed:
        logger.info("removed %d leaked sandbox object(s)", len(removed))
    return removed


class CleanupDaemon:
    """Runs :func:`sweep_leaked` every ``interval_s`` seconds (default: ``SandboxConfig.cleanup_interval_s``, 120) in a daemon thread."""

    def __init__(self, interval_s: float | None = None, client: docker.DockerClient | None = None) -> None:
        self.interval_s = SandboxConfig().cleanup_interval_s if interval_s is None else interval_s
        self._client = client
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
                self.removed += len(sweep_leaked(self._client))
            except Exception as exc:  # noqa: BLE001 - the daemon must keep running through daemon hiccups
                logger.warning("cleanup sweep failed: %s", exc)
            self.sweeps += 1
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))
