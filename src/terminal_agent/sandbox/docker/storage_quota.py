"""A task's disk quota on Docker: a kernel quota (``storage_opt size``) where the daemon's storage driver has one,
else the container's writable layer measured (see :mod:`terminal_agent.sandbox.storage_quota`).

Whether a daemon takes ``storage_opt`` is learnt once per daemon (by its API address) from the first container
created with a quota: a driver without it refuses the create at once ("--storage-opt is supported only for overlay
over xfs with 'pquota' mount option" on overlay2 over ext4), the answer is cached, and that container is created
again without it. Later starts go straight to the right path.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import docker
import docker.errors

from terminal_agent.errors import SandboxError
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.sandbox.storage_quota import directory_disk_bytes

_KERNEL_QUOTA: dict[str, bool] = {}
"""Daemon API address -> whether it takes ``storage_opt size``."""
_WHY_NOT: dict[str, str] = {}
"""Daemon API address -> the daemon's own words when it does not."""
_LOCK = threading.Lock()


class StorageOptUnsupported(Exception):
    """The daemon refused ``storage_opt``: its storage driver has no per-container quota."""


def kernel_quota_known(api: docker.APIClient) -> bool | None:
    """Whether the daemon of ``api`` takes ``storage_opt size`` (None: not tried yet)."""
    with _LOCK:
        return _KERNEL_QUOTA.get(api.base_url)


def why_no_kernel_quota(api: docker.APIClient) -> str:
    """The daemon's reason for refusing ``storage_opt`` (or a generic one)."""
    with _LOCK:
        return _WHY_NOT.get(api.base_url, "its storage driver has no per-container quota")


def remember_kernel_quota(api: docker.APIClient, supported: bool, why: str = "") -> None:
    with _LOCK:
        _KERNEL_QUOTA[api.base_url] = supported
        if why:
            _WHY_NOT[api.base_url] = why


def is_storage_opt_refusal(exc: docker.errors.APIError) -> bool:
    """Whether a create failed because of ``storage_opt`` itself (the driver cannot hold a quota)."""
    text = f"{exc.explanation or ''} {exc}".lower()
    return "storage-opt" in text or "storage opt" in text or "storageopt" in text or "storage option" in text


def storage_opt(quota_mb: int) -> dict[str, str]:
    """``HostConfig.StorageOpt`` of a ``quota_mb`` MiB quota on the writable layer."""
    return {"size": f"{int(quota_mb)}M"}


def writable_layer_measure(api: docker.APIClient, container_id: str) -> Callable[[], tuple[int, str]]:
    """A function measuring the container's writable layer: the overlay2 upper dir walked on this host when it is
    here (a root process beside the daemon), else the daemon's ``SizeRw``. Where the layer is is looked up on
    the first call. Raises ``SandboxError`` when the daemon fails or the container is gone."""
    where: list[str | None] = []

    def measure() -> tuple[int, str]:
        try:
            if not where:
                info = api.inspect_container(container_id)
                graph = info.get("GraphDriver") or {}
                upper = (graph.get("Data") or {}).get("UpperDir")
                # the id in the path is random: it exists here only when this host runs the daemon
                where.append(upper if graph.get("Name") == "overlay2" and upper and os.path.isdir(upper) else None)
            if where[0] is not None:
                return directory_disk_bytes(where[0]), "upperdir"
            rows = api.containers(all=True, filters={"id": container_id}, size=True)
        except DAEMON_ERRORS as exc:
            raise SandboxError(f"cannot measure the writable layer of {container_id[:12]}: {exc}") from exc
        if not rows:
            raise SandboxError(f"cannot measure the writable layer of {container_id[:12]}: the container is gone")
        return int(rows[0].get("SizeRw") or 0), "size_rw"  # the daemon leaves SizeRw out when it is 0

    return measure
