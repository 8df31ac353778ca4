"""Creating a sandbox's container (limits, labels, main process) and removing it."""

from __future__ import annotations

import logging

import docker
import docker.errors
from docker.types import LogConfig

from terminal_agent.errors import SandboxUnavailableError
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.shell_protocol import server_command
from terminal_agent.tasks.model import TaskLimits

logger = logging.getLogger(__name__)


def create_sandbox_container(
    api: docker.APIClient, image: str, limits: TaskLimits, config: SandboxConfig, run_id: str
) -> str:
    """Create (not start) a container of ``image`` whose main process is the shell server; its id.

    ``init=True``, ``auto_remove=True``, the task's memory (no swap), CPU and pids limits, no
    network unless ``limits.network``, no logs, the owner labels, and stdin kept open for one
    attach (``StdinOnce``), so that the server reads EOF when its owner detaches or dies.
    Raises :class:`SandboxUnavailableError` when the image is missing or the daemon refuses.
    """
    host_config = api.create_host_config(
        init=True,
        auto_remove=True,
        mem_limit=int(limits.memory_mb) * 1024 * 1024,
        memswap_limit=int(limits.memory_mb) * 1024 * 1024,
        nano_cpus=int(limits.cpus * 1e9),
        pids_limit=int(limits.pids),
        network_mode="bridge" if limits.network else "none",
        log_config=LogConfig(type=LogConfig.types.NONE),
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
            network_disabled=not limits.network,
        )
    except docker.errors.ImageNotFound as exc:
        raise SandboxUnavailableError(
            f"image {image!r} is not present (build it with `terminal-agent images ...`)"
        ) from exc
    except docker.errors.DockerException as exc:
        raise SandboxUnavailableError(f"cannot create a container of {image!r}: {exc}") from exc
    return created["Id"]


def remove_container_quietly(api: docker.APIClient, container_id: str) -> None:
    """Force-remove a container; one already gone or being removed (``auto_remove``) is fine."""
    try:
        api.remove_container(container_id, force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if exc.status_code != 409:  # 409: removal already in progress (auto_remove)
            logger.warning("could not remove container %s: %s", container_id[:12], exc)
