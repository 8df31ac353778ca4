"""The network of Docker sandboxes, switched per phase (agent, verifier) while the container runs.

Measured on Docker 20.10: a container created with ``network_mode=none`` can never be connected to a
network ("cannot be connected to multiple networks with one of the networks in private (none) mode"),
and one created with ``NetworkDisabled`` has no endpoint to give. So a sandbox without network that a
later phase will connect (``verifier_network=True``) is created in bridge mode and disconnected from
``bridge`` *before it starts* (its namespace then holds only ``lo`` from its first instruction on); the
others take ``none`` mode, which starts ~100 ms quicker here. :func:`connect` / :func:`disconnect_all`
give and take a network while it runs (80 / 57 ms p50 here).

Sandboxes that have a network share one bridge network of this process, ``terminal-agent-net-p<pid>-<hex>``,
created on first use with inter-container traffic off (``enable_icc=false``): they reach the host and
beyond, never each other. It carries the owner labels (``labels.py``) with no TTL, so the cleanup sweep
removes it once its owner process is gone (its containers went first); a normal exit removes it here.
When the daemon has no address pool left for it, or ``SandboxConfig.isolate_networks`` is off, the default
``bridge`` network is used instead (containers there can reach each other).
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import threading

import docker
import docker.errors

from terminal_agent.errors import SandboxUnavailableError
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.sandbox import labels as sandbox_labels

logger = logging.getLogger(__name__)

NETWORK_PREFIX = "terminal-agent-net-"
DEFAULT_BRIDGE = "bridge"
_NO_ICC = {"com.docker.network.bridge.enable_icc": "false"}

_LOCK = threading.Lock()
_NETWORKS: dict[tuple[int, str], str] = {}
"""(pid, daemon url) -> name of this process's sandbox network on that daemon."""
_CREATED: list[tuple[int, docker.APIClient, str]] = []
"""(creating pid, client, name): a forked child never removes its parent's network."""


def sandbox_network(api: docker.APIClient, run_id: str, *, recreate: bool = False) -> str:
    """Name of this process's sandbox network on ``api``'s daemon (created now when it does not exist)."""
    key = (os.getpid(), str(api.base_url))
    with _LOCK:
        name = _NETWORKS.get(key)
        if name is not None and not recreate:
            return name
        name = f"{NETWORK_PREFIX}p{os.getpid()}-{secrets.token_hex(4)}"
        labels = sandbox_labels.owner_labels(run_id, 0)  # no TTL: it lives as long as its owner process
        try:
            api.create_network(name, driver="bridge", options=_NO_ICC, labels=labels, check_duplicate=True)
        except DAEMON_ERRORS as exc:
            if "address pool" not in str(exc) and "non-overlapping" not in str(exc):
                raise SandboxUnavailableError(f"cannot create the sandbox network {name}: {exc}") from exc
            logger.warning(
                "no address pool left for a sandbox network (%s); sandboxes with network use Docker's default "
                "bridge, where they can reach each other", exc,
            )
            name = DEFAULT_BRIDGE
        else:
            _CREATED.append((os.getpid(), api, name))
        _NETWORKS[key] = name
        return name


def attached_networks(api: docker.APIClient, container_id: str) -> list[str]:
    """Names of the networks ``container_id`` is connected to now."""
    info = api.inspect_container(container_id)
    return sorted(((info.get("NetworkSettings") or {}).get("Networks") or {}).keys())


def connect(api: docker.APIClient, container_id: str, run_id: str, *, isolated: bool = True) -> None:
    """Connect the container to this process's sandbox network (recreated once when it vanished), or to
    Docker's default ``bridge`` when not ``isolated``."""
    for attempt in range(2):
        name = sandbox_network(api, run_id, recreate=attempt > 0) if isolated else DEFAULT_BRIDGE
        try:
            api.connect_container_to_network(container_id, name)
            return
        except docker.errors.NotFound as exc:
            if attempt or "network" not in str(exc).lower():
                raise
            logger.warning("sandbox network %s is gone; creating a new one", name)
        except docker.errors.APIError as exc:
            if "already exists" in str(exc):  # connected already: what was asked
                return
            raise


def disconnect_all(api: docker.APIClient, container_id: str) -> None:
    """Disconnect the container from every network it is on (it keeps only ``lo``)."""
    for name in attached_networks(api, container_id):
        try:
            api.disconnect_container_from_network(container_id, name, force=True)
        except docker.errors.NotFound:
            continue  # gone meanwhile: what was asked (a vanished container is noticed by the caller)


def remove_own_networks() -> None:
    """Remove the sandbox networks this process created (at exit; one still in use is left to the sweep)."""
    with _LOCK:
        created = [(api, name) for pid, api, name in _CREATED if pid == os.getpid()]
        _CREATED[:] = [entry for entry in _CREATED if entry[0] != os.getpid()]
        for key in [key for key in _NETWORKS if key[0] == os.getpid()]:
            del _NETWORKS[key]
    for api, name in created:
        try:
            api.remove_network(name)
        except Exception as exc:  # noqa: BLE001 - best effort at exit: the cleanup sweep removes what is left
            logger.debug("removing network %s at exit: %s", name, exc)


atexit.register(remove_own_networks)

__all__ = ["NETWORK_PREFIX", "attached_networks", "connect", "disconnect_all", "remove_own_networks", "sandbox_network"]
