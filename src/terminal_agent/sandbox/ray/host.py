"""SandboxHost: the Ray actor on one Docker node that owns that node's sandboxes.

One per node (it claims 1 of the node's ``terminal_agent_sandbox_host`` resource). It builds task
images there (cached by content hash, :func:`terminal_agent.sandbox.images.manager.ensure_task_image`),
starts :class:`~terminal_agent.sandbox.docker.sandbox.DockerSandbox` containers whose attach
sockets live in this actor's process, and serves the driver's calls on them
(:class:`~terminal_agent.sandbox.ray.proxy.RaySandbox`). It also runs the node's
:class:`~terminal_agent.sandbox.cleanup.CleanupDaemon`.

Who removes the containers when something dies:

* this actor dies (killed, node lost, OOM): its process's attach sockets close, every container's
  shell server reads EOF and exits, Docker removes it (``auto_remove``) - the dead-man switch;
* the driver dies: Ray destroys the actors the driver owned (a non-detached actor shares its
  owner's fate), which is the case above.

This module imports no Ray: the backend wraps :class:`SandboxHost` with ``ray.remote``.
"""

from __future__ import annotations

import io
import logging
import os
import pickle
import socket
import tarfile
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.errors import SandboxError
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task, TaskLimits

logger = logging.getLogger(__name__)

SANDBOX_METHODS = frozenset(
    {
        "exec",
        "read_file",
        "write_file",
        "is_alive",
        "kill_agent_processes",
        "check_storage",
        "list_changes",
        "image_has",
        "put_archive",
        "run_privileged",
        "reset_shell_state",
        "set_network",
    }
)
"""DockerSandbox methods the driver may call through :meth:`SandboxHost.call`."""


@dataclass(frozen=True)
class HostDescription:
    """What a host tells the driver about itself."""

    node_id: str
    hostname: str
    pid: int
    live: int
    """Sandboxes open on this host now."""
    docker_version: str = ""


@dataclass(frozen=True)
class StartedSandbox:
    """What the driver's proxy needs to know about a sandbox the host started."""

    sandbox_id: str
    image: str
    server_info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallOutcome:
    """The result of one call, or the exception it raised (re-raised as is on the driver)."""

    value: Any = None
    error: BaseException | None = None


def failed(exc: BaseException) -> CallOutcome:
    """``exc`` as an outcome; one that cannot travel (unpicklable) becomes a SandboxError naming it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any pickling failure: send a plain error the driver can raise
        exc = SandboxError(f"{type(exc).__name__}: {exc}")
    return CallOutcome(error=exc)


class SandboxHost:
    """Owns the sandboxes of one node. Every public method is an actor method (threaded actor)."""

    def __init__(self, node_id: str, cleanup_interval_s: float = 120.0) -> None:
        from terminal_agent.sandbox.cleanup import CleanupDaemon
        from terminal_agent.sandbox.docker_connection import docker_client

        self.node_id = node_id
        self._client = docker_client()  # raises DockerNotAvailableError when this node has no daemon
        self._docker_version = str(self._client.version().get("Version", ""))
        self._sandboxes: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._cleanup = CleanupDaemon(interval_s=cleanup_interval_s).start()  # every backend's leaks on this node

    # --- host -----------------------------------------------------------------------------------
    def describe(self) -> HostDescription:
        with self._lock:
            live = len(self._sandboxes)
        return HostDescription(self.node_id, socket.gethostname(), os.getpid(), live, self._docker_version)

    def cleanup_sweeps(self) -> int:
        """Sweeps the node's cleanup daemon has completed."""
        return self._cleanup.sweeps

    def start(
        self,
        image: "str | Task",
        limits: TaskLimits,
        config: SandboxConfig,
        run_id: str | None,
        env: dict[str, str] | None = None,
        verifier_network: bool | None = None,
    ) -> CallOutcome:
        """Start a sandbox of ``image`` (an image name, or a task whose image is built here first) with
        ``env`` (resolved on the driver) in its environment."""
        from terminal_agent.sandbox.docker.sandbox import DockerSandbox
        from terminal_agent.sandbox.images.manager import ensure_task_image

        try:
            image_ref = ensure_task_image(image) if isinstance(image, Task) else image
            sandbox = DockerSandbox.start(
                image_ref, limits=limits, config=config, run_id=run_id, client=self._client, env=env,
                verifier_network=verifier_network,
            )
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the driver, which raises it there
            return failed(exc)
        with self._lock:
            self._sandboxes[sandbox.id] = sandbox
        return CallOutcome(StartedSandbox(sandbox.id, image_ref, dict(sandbox.server_info)))

    def call(self, sandbox_id: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> CallOutcome:
        """Run ``method`` of the sandbox; its exception (OSError, SandboxError, ...) is returned, not raised."""
        if method not in SANDBOX_METHODS:
            return failed(ValueError(f"SandboxHost.call: {method!r} is not a sandbox method"))
        try:
            return CallOutcome(getattr(self._get(sandbox_id), method)(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to the driver, which raises it as the caller's error
            return failed(exc)

    def upload_archive(self, sandbox_id: str, remote_dir: str, tar: bytes) -> CallOutcome:
        """``upload_dir`` of a tree the driver packed: unpacked here into a scratch dir, then uploaded."""
        try:
            sandbox = self._get(sandbox_id)
            with tempfile.TemporaryDirectory(prefix="ta-upload-") as scratch:
                with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
                    archive.extractall(scratch, filter="tar")
                sandbox.upload_dir(scratch, remote_dir)
            return CallOutcome()
        except Exception as exc:  # noqa: BLE001 - handed to the driver
            return failed(exc)

    def close_sandbox(self, sandbox_id: str) -> None:
        with self._lock:
            sandbox = self._sandboxes.pop(sandbox_id, None)
        if sandbox is not None:
            sandbox.close()

    def close_run(self, run_id: str) -> int:
        """Close every sandbox of ``run_id``; how many."""
        with self._lock:
            mine = [sid for sid, sandbox in self._sandboxes.items() if sandbox.run_id == run_id]
        for sandbox_id in mine:
            self.close_sandbox(sandbox_id)
        return len(mine)

    def close_all(self) -> int:
        with self._lock:
            sandboxes, self._sandboxes = list(self._sandboxes.values()), {}
        for sandbox in sandboxes:
            sandbox.close()
        return len(sandboxes)

    def _get(self, sandbox_id: str) -> Any:
        with self._lock:
            sandbox = self._sandboxes.get(sandbox_id)
        if sandbox is None:
            raise SandboxError(f"sandbox {sandbox_id[:12]} is closed (unknown to the host of node {self.node_id[:12]})")
        return sandbox

