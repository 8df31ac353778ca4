"""The shared Docker client of this process."""

from __future__ import annotations

import os
import threading

import docker

from terminal_agent.errors import DockerNotAvailableError

_CLIENT_LOCK = threading.Lock()
_CLIENTS: dict[tuple[int, float], docker.DockerClient] = {}


def docker_client(timeout_s: float = 120.0) -> docker.DockerClient:
    """A shared Docker client of this process (one per pid, so a fork gets its own)."""
    key = (os.getpid(), timeout_s)
    with _CLIENT_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            try:
                client = docker.from_env(timeout=int(timeout_s), max_pool_size=64)
                client.ping()
            except Exception as exc:  # noqa: BLE001 - any failure here means "no daemon"
                raise DockerNotAvailableError(
                    f"no Docker daemon answers ({exc}); start one (e.g. `dockerd > /var/log/dockerd.log 2>&1 &` "
                    "as root) or set DOCKER_HOST"
                ) from exc
            _CLIENTS[key] = client
        return client
