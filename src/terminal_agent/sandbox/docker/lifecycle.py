"""Creating a sandbox's container (limits, labels, main process) and removing it."""

from __future__ import annotations

import logging
import time

import docker
import docker.errors
import requests
from docker.types import LogConfig

from terminal_agent.errors import SandboxUnavailableError
from terminal_agent.sandbox.docker import network as docker_network
from terminal_agent.sandbox.docker import storage_quota as docker_storage
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.config import SandboxConfig, effective_limits
from terminal_agent.sandbox.shell_protocol import server_command
from terminal_agent.tasks.model import TaskLimits

logger = logging.getLogger(__name__)


def create_sandbox_container(
    api: docker.APIClient,
    image: str,
    limits: TaskLimits,
    config: SandboxConfig,
    run_id: str,
    env: dict[str, str] | None = None,
    *,
    network_later: bool = False,
    storage_mb: int | None = None,
) -> str:
    """Create (not start) a container of ``image`` whose main process is the shell server; its id.

    ``init=True``, ``auto_remove=True``, the task's memory (no swap), CPU and pids limits, no logs,
    the owner labels, ``env`` (resolved already) in its environment, and stdin kept open for one
    attach (``StdinOnce``), so that the server reads EOF when its owner detaches or dies.
    Network: on this process's sandbox network when ``limits.network`` (Docker's ``bridge`` unless
    ``config.isolate_networks``); otherwise, when a later phase
    may ask for one (``network_later``), created in bridge mode and disconnected before it starts, so
    that it has only ``lo`` yet can be given a network (``docker_network``); otherwise ``none`` (the
    quickest start: ~80 ms less than a disconnected bridge here). Raises
    :class:`SandboxUnavailableError` when the image is missing or the daemon refuses. ``storage_mb``: a kernel
    quota on the writable layer (``storage_opt``); ``StorageOptUnsupported`` when the daemon's driver has none.
    """
    limits = effective_limits(limits, config)
    memory = int(limits.memory_mb) * 1024 * 1024 if limits.memory_mb is not None else None  # None: no limit
    if limits.network:
        network = docker_network.sandbox_network(api, run_id) if config.isolate_networks else docker_network.DEFAULT_BRIDGE
    else:
        network = docker_network.DEFAULT_BRIDGE if network_later else "none"
    host_config = api.create_host_config(
        init=True,
        auto_remove=True,
        mem_limit=memory,
        memswap_limit=memory,
        nano_cpus=int(limits.cpus * 1e9) if limits.cpus is not None else None,
        pids_limit=int(limits.pids),
        network_mode=network,
        log_config=LogConfig(type=LogConfig.types.NONE),
        storage_opt=docker_storage.storage_opt(storage_mb) if storage_mb is not None else None,
    )
    try:
        created = api.create_container(
            image=image,
            entrypoint=server_command(config.ttl_s),
            command=[],
            stdin_open=True,  # with detach=False this also sets StdinOnce: EOF when we detach
            detach=False,
            tty=False,
            use_config_proxy=False,
            labels=sandbox_labels.owner_labels(run_id, config.ttl_s, image),
            host_config=host_config,
            user=config.user or "",
            environment=[f"{key}={value}" for key, value in (env or {}).items()] or None,
            network_disabled=network == "none",
            networking_config=(
                None if network == "none"
                # types-docker types the argument as one EndpointConfig; docker-py takes {network: EndpointConfig}
                else api.create_networking_config({network: api.create_endpoint_config()})  # type: ignore[arg-type]
            ),
        )
    except docker.errors.ImageNotFound as exc:
        raise SandboxUnavailableError(
            f"image {image!r} is not present (build it with `terminal-agent images ...`)"
        ) from exc
    except docker.errors.APIError as exc:
        if storage_mb is not None and docker_storage.is_storage_opt_refusal(exc):
            raise docker_storage.StorageOptUnsupported(str(exc.explanation or exc)) from exc
        raise SandboxUnavailableError(f"cannot create a container of {image!r}: {exc}") from exc
    except DAEMON_ERRORS as exc:
        raise SandboxUnavailableError(f"cannot create a container of {image!r}: {exc}") from exc
    container_id = str(created["Id"])
    if network == docker_network.DEFAULT_BRIDGE and not limits.network:
        try:
            api.disconnect_container_from_network(container_id, network, force=True)
        except DAEMON_ERRORS as exc:
            remove_container_quietly(api, container_id)
            raise SandboxUnavailableError(f"cannot take the network away from a container of {image!r}: {exc}") from exc
    return container_id


REMOVAL_WAIT_S = 10.0
"""How long a close waits for the daemon's own (``auto_remove``) removal to finish."""


def remove_container_quietly(api: docker.APIClient, container_id: str, wait_s: float = REMOVAL_WAIT_S) -> None:
    """Force-remove a container; one already gone is fine.

    One whose removal is already in progress (409: ``auto_remove`` after its shell exited) is
    waited for, up to ``wait_s``: callers count on a closed sandbox's container being gone (leak
    checks, pool accounting), and on a loaded daemon that removal can take a second or more.
    """
    try:
        api.remove_container(container_id, force=True)
        return
    except docker.errors.NotFound:
        return
    except docker.errors.APIError as exc:
        if exc.status_code != 409:
            logger.warning("could not remove container %s: %s", container_id[:12], exc)
            return
    except requests.RequestException as exc:  # the daemon is gone: it removes auto-remove containers when it is back
        logger.warning("could not remove container %s, the daemon is gone: %s", container_id[:12], exc)
        return
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            api.inspect_container(container_id)
        except docker.errors.NotFound:
            return
        except (docker.errors.APIError, requests.RequestException):  # the daemon is busy or going away: stop waiting
            return
        time.sleep(0.05)
    logger.warning("container %s was still being removed after %.0f s", container_id[:12], wait_s)
