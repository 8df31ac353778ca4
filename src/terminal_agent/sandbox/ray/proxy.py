"""RaySandbox: the driver's handle on a sandbox that a SandboxHost actor runs on some node.

It implements :class:`terminal_agent.interfaces.Sandbox` by calling the host actor
(:mod:`terminal_agent.sandbox.ray.host`): every method is one actor call that runs the
same method of the node's DockerSandbox, so the grader, the tools and the env use it unchanged.
The caller's errors come back as they were raised there (``FileNotFoundError``, ``ValueError``,
``SandboxError``); a host that died or stopped answering makes the sandbox broken
(:class:`~terminal_agent.errors.SandboxError`), which the env records as an infrastructure failure.
"""

from __future__ import annotations

import io
import logging
import math
import tarfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from terminal_agent.errors import SandboxError
from terminal_agent.interfaces import ExecResult, FilesystemChanges, WatchedPaths
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.ray.host import CallOutcome, StartedSandbox
from terminal_agent.sandbox.ray.settings import ray_settings
from terminal_agent.sandbox.storage_quota import StorageUsage
from terminal_agent.tasks.model import TaskLimits

logger = logging.getLogger(__name__)

_CLOSE_WAIT_S = 30.0
_PING_WAIT_S = 15.0


class RaySandbox:
    """A sandbox on a (possibly remote) node, used through its host actor. See :class:`~terminal_agent.interfaces.Sandbox`."""

    def __init__(
        self,
        host: Any,
        node_id: str,
        started: StartedSandbox,
        *,
        limits: TaskLimits,
        config: SandboxConfig,
        run_id: str | None,
        on_close: Callable[[str], None] | None = None,
        on_host_died: Callable[[str], None] | None = None,
    ) -> None:
        self._host = host
        self.node_id = node_id
        """Ray node id of the node whose Docker daemon runs the container."""
        self._id = started.sandbox_id
        self.image = started.image
        """The image the host started (a task's content-hash tag once built there)."""
        self.server_info: dict[str, Any] = dict(started.server_info)
        self.limits = limits
        self.config = config
        self.run_id = run_id
        self.created_at = time.monotonic()
        self._on_close = on_close
        self._on_host_died = on_host_died
        self._closed = False
        self._broken: str | None = None
        self._close_lock = threading.Lock()
        self._network = bool(limits.network)
        # a proxy dropped without close() still frees its container and its slot on the host
        self._finalizer = weakref.finalize(self, _close_abandoned, host, self._id, node_id, on_close)
        self._finalizer.atexit = False  # at exit the driver's death ends its hosts and their containers

    @property
    def id(self) -> str:
        return self._id

    @property
    def host(self) -> Any:
        """The SandboxHost actor handle serving this sandbox."""
        return self._host

    def __repr__(self) -> str:
        return f"RaySandbox({self._id[:12]} on node {self.node_id[:12]}, image={self.image!r})"

    def __enter__(self) -> "RaySandbox":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- the wire -------------------------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._closed:
            raise SandboxError(f"sandbox {self._id[:12]} is closed")
        if self._broken:
            raise SandboxError(f"sandbox {self._id[:12]} is broken: {self._broken}")

    def _wait(self, ref: Any, wait_s: float) -> Any:
        """The value of actor call ``ref``; a dead or silent host breaks the sandbox."""
        import ray
        import ray.exceptions

        try:
            outcome: CallOutcome = ray.get(ref, timeout=wait_s)
        except ray.exceptions.GetTimeoutError as exc:
            raise self._break(f"its host on node {self.node_id[:12]} did not answer within {wait_s:.0f} s") from exc
        except ray.exceptions.ActorDiedError as exc:  # the host process is gone, and its containers with it
            reason = f"its host on node {self.node_id[:12]} died ({type(exc).__name__}: {str(exc)[:300]})"
            if self._on_host_died is not None:
                self._on_host_died(reason)  # the fleet brings up a new host there for the next sandboxes
            raise self._break(reason) from exc
        except ray.exceptions.RayError as exc:  # actor died, node lost, object lost: the host is gone
            raise self._break(f"its host on node {self.node_id[:12]} is gone ({type(exc).__name__}: {str(exc)[:300]})") from exc
        if outcome.error is not None:
            raise outcome.error
        return outcome.value

    def _break(self, reason: str) -> SandboxError:
        self._broken = self._broken or reason
        return SandboxError(f"sandbox {self._id[:12]} is broken: {reason}")

    def _call(self, method: str, wait_s: float, *args: Any, **kwargs: Any) -> Any:
        self._check_usable()
        return self._wait(self._host.call.remote(self._id, method, args, kwargs), wait_s)

    def _command_wait(self, timeout: float | None) -> float:
        """How long to wait for an actor call whose command may run ``timeout`` seconds (the host bounds it)."""
        bounded = self.config.max_command_timeout_s
        if timeout is not None and not math.isnan(timeout):
            bounded = min(max(float(timeout), 0.0), bounded)
        return bounded + self.config.reply_grace_s + ray_settings(self.config).call_grace_s

    # --- commands -------------------------------------------------------------------------------
    def exec(
        self,
        command: str,
        timeout: float | None = None,
        *,
        workdir: str | None = None,
        env: dict[str, str] | None = None,
        merge_stderr: bool = True,
        stateless: bool = False,
        block: bool = True,
    ) -> ExecResult:
        started = time.monotonic()
        result: ExecResult = self._call(
            "exec",
            self._command_wait(timeout),
            command,
            timeout,
            workdir=workdir,
            env=env,
            merge_stderr=merge_stderr,
            stateless=stateless,
            block=block,
        )
        return replace(result, duration_s=time.monotonic() - started)

    def check_storage(self) -> StorageUsage | None:
        """The node's DockerSandbox measures its own writable layer (see ``sandbox.storage_quota``)."""
        usage: StorageUsage | None = self._call("check_storage", self._file_wait())
        return usage

    def kill_agent_processes(self) -> int:
        return int(self._call("kill_agent_processes", 30.0 + ray_settings(self.config).call_grace_s))

    def reset_shell_state(self) -> None:
        self._call("reset_shell_state", 10.0 + ray_settings(self.config).call_grace_s)

    # --- files ----------------------------------------------------------------------------------
    def read_file(self, path: str) -> bytes:
        data: bytes = self._call("read_file", self._file_wait(), path)
        return data

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"write_file takes bytes, not {type(data).__name__}")
        self._call("write_file", self._file_wait(), path, bytes(data), mode)

    def upload_dir(self, local_dir: Path | str, remote_dir: str) -> None:
        """Packs ``local_dir`` here (owned by root, as the Docker backend does) and sends it to the host."""
        local = Path(local_dir)
        if not local.is_dir():
            raise NotADirectoryError(str(local))

        def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for child in sorted(local.iterdir()):
                tar.add(str(child), arcname=child.name, recursive=True, filter=as_root)
        self._check_usable()
        self._wait(self._host.upload_archive.remote(self._id, remote_dir, buffer.getvalue()), self._file_wait())

    def _file_wait(self) -> float:
        return self.config.docker_timeout_s + ray_settings(self.config).call_grace_s

    # --- for the grader -------------------------------------------------------------------------
    @property
    def image_workdir(self) -> str:
        return str(self.server_info.get("cwd") or "/")

    @property
    def service_pids(self) -> tuple[int, ...]:
        pid = self.server_info.get("pid")
        return (int(pid),) if pid else ()

    def list_changes(self, watched: WatchedPaths, *, prefer_host_read: bool = True) -> FilesystemChanges:
        changes: FilesystemChanges = self._call("list_changes", self._file_wait(), watched, prefer_host_read=prefer_host_read)
        return changes

    def image_has(self, paths: list[str]) -> dict[str, bool]:
        found: dict[str, bool] = self._call("image_has", self._file_wait(), list(paths))
        return found

    def put_archive(self, dest_dir: str, tar: bytes) -> None:
        self._call("put_archive", self._file_wait(), dest_dir, bytes(tar))

    def run_privileged(self, argv: list[str], timeout: float) -> ExecResult:
        result: ExecResult = self._call("run_privileged", float(timeout) + self._file_wait(), list(argv), timeout)
        return result

    @property
    def network_enabled(self) -> bool:
        """Whether the container has a network now (as last set through this proxy, the only way to set it)."""
        return self._network

    def set_network(self, enabled: bool) -> None:
        """The host's DockerSandbox connects or disconnects the container (see DockerSandbox.set_network)."""
        if bool(enabled) == self._network:
            self._check_usable()
            return
        self._call("set_network", self._file_wait(), bool(enabled))
        self._network = bool(enabled)

    # --- lifecycle ------------------------------------------------------------------------------
    def is_alive(self) -> bool:
        if self._closed or self._broken:
            return False
        try:
            return bool(self._call("is_alive", _PING_WAIT_S))
        except SandboxError:
            return False

    def close(self) -> None:
        """Ask the host to remove the container (a dead host has removed it already). Never raises."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._finalizer.detach()
        try:
            import ray

            ray.get(self._host.close_sandbox.remote(self._id), timeout=_CLOSE_WAIT_S)
        except Exception as exc:  # noqa: BLE001 - close never raises; a lost host took its containers with it
            logger.debug("closing %s on node %s: %s", self._id[:12], self.node_id[:12], exc)
        if self._on_close is not None:
            self._on_close(self.node_id)


def _close_abandoned(host: Any, sandbox_id: str, node_id: str, on_close: Callable[[str], None] | None) -> None:
    """Finalizer of a proxy collected without ``close()``: ask its host to remove the container, free the slot."""
    try:
        host.close_sandbox.remote(sandbox_id)  # not waited for: this may run inside the garbage collector
    except Exception:  # noqa: BLE001 - Ray may be shut down already; the host's death then removed the container
        pass
    if on_close is not None:
        on_close(node_id)
