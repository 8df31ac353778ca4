"""DockerSandbox: one container, one persistent shell on its attached socket.

The container's main process (under ``docker-init``) is the shell server of
``assets/shell_server.py``; it reads requests from the container's stdin, which this process
holds through an attach socket opened before the container starts (``stdin_once``): when this
process dies - even by SIGKILL - the socket closes, stdin hits EOF, the server exits and Docker
removes the container (``auto_remove``). Files move through the Engine API archive calls.

Parts, each in its own module of this package (``sandbox/docker/``): ``lifecycle`` (create the container with
its limits and labels, remove it), ``attach_stream`` (the raw attach socket, Docker's frames),
the core's ``shell_protocol`` (requests and replies of the shell server), ``archive_files`` (read_file /
write_file / upload_dir) and the core's ``docker_connection`` (the shared client, re-exported here as
:func:`docker_client`).
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import docker
import docker.errors

from terminal_agent.errors import SandboxError, SandboxUnavailableError
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.interfaces import ExecResult, FilesystemChanges, WatchedPaths
from terminal_agent.sandbox.docker.archive_files import ArchiveFiles
from terminal_agent.sandbox.docker.attach_stream import RECV_CHUNK, STDOUT, DockerStreamDemuxer, open_attach_socket
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker import grading_ops as container_grading_ops
from terminal_agent.sandbox.docker import network as docker_network
from terminal_agent.sandbox.docker import storage_quota as docker_storage
from terminal_agent.sandbox.docker.lifecycle import create_sandbox_container, remove_container_quietly
from terminal_agent.sandbox.storage_quota import StorageEnforcement, StorageUsage, StorageWatch, storage_enforcement
from terminal_agent.sandbox.docker_connection import docker_client
from terminal_agent.sandbox.shell_client import STDERR_TAIL, ShellServerClient
from terminal_agent.sandbox.shell_protocol import bootstrap_payload
from terminal_agent.tasks.model import TaskLimits

__all__ = ["DockerSandbox", "docker_client"]

logger = logging.getLogger(__name__)

_LIVE: "weakref.WeakSet[DockerSandbox]" = weakref.WeakSet()


class DockerSandbox(ShellServerClient):
    """A running container with a persistent shell. See :class:`terminal_agent.interfaces.Sandbox`."""

    _kind = "container"

    def __init__(
        self,
        container_id: str,
        sock: socket.socket,
        *,
        client: docker.DockerClient,
        image: str,
        limits: TaskLimits,
        config: SandboxConfig,
        run_id: str,
    ) -> None:
        self._init_client(container_id)
        self._sock = sock
        self._client = client
        self.image = image
        self.limits = limits
        self.config = config
        self.run_id = run_id
        self._demuxer = DockerStreamDemuxer()
        self.server_info: dict[str, Any] = {}
        self.created_at = time.monotonic()
        self._network = bool(limits.network)
        self._switchable = bool(limits.network)
        """Whether the container can be connected (it was not created in ``none`` mode)."""
        self._network_lock = threading.Lock()
        self.storage_enforcement: StorageEnforcement = "none"
        """How the task's disk quota is held: ``kernel`` (``storage_opt``), ``measured`` or ``none``."""
        self._storage_watch: StorageWatch | None = None
        _LIVE.add(self)

    # --- lifecycle ----------------------------------------------------------------------------
    @classmethod
    def start(
        cls,
        image: str,
        limits: TaskLimits | None = None,
        config: SandboxConfig | None = None,
        run_id: str | None = None,
        *,
        client: docker.DockerClient | None = None,
        env: dict[str, str] | None = None,
        verifier_network: bool | None = None,
    ) -> "DockerSandbox":
        """Create, attach and start a container of ``image`` and wait for its shell server.

        ``env`` (resolved, see ``task_env``) is set in the container's environment, so the persistent
        shell starts with it and :meth:`reset_shell_state` keeps it. The container has a network from
        its first instruction on only when ``limits.network``. ``verifier_network``: the network the
        verifier phase will ask for (None: the agent's); a sandbox without network that will be asked
        for one is started so that :meth:`set_network` can connect it, the others take the quicker
        ``none`` mode.

        Raises :class:`SandboxUnavailableError` (image missing, no python3 in it, daemon error)
        or :class:`DockerNotAvailableError`.
        """
        limits = limits or TaskLimits()
        config = config or SandboxConfig()
        run_id = run_id or f"pid{os.getpid()}"
        client = client or docker_client(config.docker_timeout_s)
        api = client.api
        network_later = bool(verifier_network) and not limits.network
        container_id, enforcement = _create_with_storage_quota(api, image, limits, config, run_id, env, network_later)
        sock = None
        sandbox = None
        try:
            sock, rest = open_attach_socket(api, container_id)
            sandbox = cls(
                container_id, sock, client=client, image=image, limits=limits, config=config, run_id=run_id
            )
            sandbox._switchable = bool(limits.network) or network_later
            sandbox.storage_enforcement = enforcement
            if enforcement == "measured" and limits.storage_mb is not None:
                sandbox._storage_watch = StorageWatch(
                    limits.storage_mb, docker_storage.writable_layer_measure(api, container_id),
                    config.storage_measure_share)
            sandbox._ingest(rest)
            api.start(container_id)
            sock.sendall(bootstrap_payload())
            ready = sandbox._await("ready", time.monotonic() + config.start_timeout_s, starting=True)
            sandbox.server_info = ready.header
            if ready.header.get("problems"):
                raise SandboxUnavailableError(
                    f"image {image!r} cannot host the sandbox shell: {'; '.join(ready.header['problems'])}"
                )
            return sandbox
        except BaseException as exc:
            if sandbox is not None:
                sandbox.close()
            else:
                if sock is not None:
                    try:
                        sock.close()
                    except OSError:
                        pass
                remove_container_quietly(api, container_id)
            if isinstance(exc, SandboxError):
                raise
            if isinstance(exc, docker.errors.DockerException | OSError):
                raise SandboxUnavailableError(f"cannot start a container of {image!r}: {exc}") from exc
            raise

    @property
    def id(self) -> str:
        return self._id

    def close(self) -> None:
        """Close the attach socket (the server then kills everything and exits); force-remove the container."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass
        try:
            remove_container_quietly(self._client.api, self._id)
        except Exception:  # noqa: BLE001 - close never raises
            logger.debug("removing %s failed", self._id[:12], exc_info=True)
        _LIVE.discard(self)

    def __repr__(self) -> str:
        return f"DockerSandbox({self._id[:12]}, image={self.image!r})"

    def check_storage(self) -> StorageUsage | None:
        """See :class:`~terminal_agent.sandbox.storage_quota.StorageWatchedSandbox`: the writable layer against a
        measured quota (None when the kernel holds it or there is none)."""
        if self._storage_watch is None:
            return None
        self._check_usable()
        return self._storage_watch.check()

    # --- for the grader (see grading_ops.py) --------------------------------------------
    @property
    def network_enabled(self) -> bool:
        """Whether the container is connected to a network now."""
        return self._network

    def set_network(self, enabled: bool) -> None:
        """See :meth:`Sandbox.set_network <terminal_agent.interfaces.Sandbox.set_network>`: connects the
        running container to this process's sandbox network, or disconnects it from every network."""
        enabled = bool(enabled)
        with self._network_lock:
            self._check_usable()
            if enabled == self._network:
                return
            if not self._switchable:
                raise SandboxError(
                    f"sandbox {self._short_id} was started without a network and without a way to get one "
                    "(Docker cannot connect a container created in 'none' mode): start it with "
                    "verifier_network=True when a later phase needs the network"
                )
            api = self._client.api
            try:
                if enabled:
                    docker_network.connect(api, self._id, self.run_id, isolated=self.config.isolate_networks)
                else:
                    docker_network.disconnect_all(api, self._id)
            except DAEMON_ERRORS as exc:
                if enabled:
                    raise SandboxError(f"sandbox {self._short_id}: cannot connect it to a network: {exc}") from exc
                # a sandbox that may still have a network it must not have is not usable any more
                raise self._broken_error(f"cannot take its network away: {exc}") from exc
            self._network = enabled

    def list_changes(self, watched: WatchedPaths, *, prefer_host_read: bool = True) -> FilesystemChanges:
        self._check_usable()
        return container_grading_ops.list_container_changes(self._client.api, self._id, watched, prefer_host_read)

    def image_has(self, paths: list[str]) -> dict[str, bool]:
        self._check_usable()
        return container_grading_ops.container_image_has(self._client.api, self._id, list(paths))

    def put_archive(self, dest_dir: str, tar: bytes) -> None:
        self._check_usable()
        container_grading_ops.put_container_archive(self._client.api, self._id, dest_dir, tar)

    def run_privileged(self, argv: list[str], timeout: float) -> ExecResult:
        self._check_usable()
        return container_grading_ops.run_privileged_exec(self._client.api, self._id, list(argv), timeout)

    # --- files (Engine API archives, see archive_files.py) ---------------------------------------
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """See :meth:`Sandbox.write_file <terminal_agent.interfaces.Sandbox.write_file>` (``put_archive``)."""
        self._archive_files().write_file(path, data, mode)

    def upload_dir(self, local_dir: Path | str, remote_dir: str) -> None:
        """See :meth:`Sandbox.upload_dir <terminal_agent.interfaces.Sandbox.upload_dir>`.

        The contents of ``local_dir`` land in ``remote_dir`` (created when missing), owned by root.
        """
        self._archive_files().upload_dir(local_dir, remote_dir)

    def read_file(self, path: str) -> bytes:
        """See :meth:`Sandbox.read_file <terminal_agent.interfaces.Sandbox.read_file>` (``get_archive``).

        Symlinks are followed.
        """
        return self._archive_files().read_file(path)

    def _archive_files(self) -> ArchiveFiles:
        # built per call: a held one would make a reference cycle, and an abandoned sandbox would
        # then keep its socket (and container) until the garbage collector runs
        return ArchiveFiles(
            self._client.api,
            self._id,
            shell_op=self._call,
            check_usable=self._check_usable,
            broken_error=self._broken_error,
            over_channel=self.server_info.get("uid") == 0,  # as root, like an archive unpacked by the daemon
        )

    # --- transport: the attach socket (Docker frames: the server's stdout and stderr) ----------------
    @property
    def _short_id(self) -> str:
        return self._id[:12]

    def _send(self, data: bytes) -> None:
        self._sock.sendall(data)

    def _receive(self, timeout: float, starting: bool) -> bytes | None:
        self._sock.settimeout(timeout)
        try:
            return self._sock.recv(RECV_CHUNK)
        except TimeoutError:
            return None
        except OSError as exc:
            raise self._broken_error(f"lost the shell socket: {exc}", starting) from exc

    def _ingest(self, data: bytes) -> None:
        for stream, payload in self._demuxer.feed(data):
            if stream == STDOUT:
                self._replies.extend(self._decoder.feed(payload))
            else:
                self._stderr_tail = (self._stderr_tail + payload)[-STDERR_TAIL:]
                logger.debug("shell server stderr (%s): %r", self._id[:12], payload[-500:])

def _create_with_storage_quota(
    api: docker.APIClient, image: str, limits: TaskLimits, config: SandboxConfig, run_id: str,
    env: dict[str, str] | None, network_later: bool,
) -> tuple[str, StorageEnforcement]:
    """Create the container, with a kernel quota when the task has one, the policy wants it held and the daemon
    may take it (learnt from the first try, see ``docker/storage_quota``); its id and how the quota is held.
    Raises ``StorageQuotaRefusedError`` (policy ``refuse`` without a kernel quota) before anything is created."""
    quota = limits.storage_mb

    def plan() -> StorageEnforcement:
        return storage_enforcement(quota, config.storage, kernel=docker_storage.kernel_quota_known(api),
                                   backend="docker", why_no_kernel=docker_storage.why_no_kernel_quota(api))

    enforcement = plan()
    if enforcement == "kernel":
        try:
            container_id = create_sandbox_container(api, image, limits, config, run_id, env,
                                                    network_later=network_later, storage_mb=quota)
            docker_storage.remember_kernel_quota(api, True)
            return container_id, "kernel"
        except docker_storage.StorageOptUnsupported as exc:
            logger.info("the Docker daemon takes no storage_opt (%s): disk quotas are measured", exc)
            docker_storage.remember_kernel_quota(api, False, str(exc))
            enforcement = plan()  # measured, or the refusal
    return create_sandbox_container(api, image, limits, config, run_id, env, network_later=network_later), enforcement


@atexit.register
def close_live_sandboxes() -> None:
    """Close every live sandbox of this process: the backend's ``close`` hook, and the backstop of a normal
    interpreter exit (SIGKILL runs none of this: the dead-man switch covers it)."""
    for sandbox in list(_LIVE):
        sandbox.close()
