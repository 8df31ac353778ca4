"""DockerSandbox: one container, one persistent shell on its attached socket.

The container's main process (under ``docker-init``) is the shell server of
``assets/shell_server.py``; it reads requests from the container's stdin, which this process
holds through an attach socket opened before the container starts (``stdin_once``): when this
process dies - even by SIGKILL - the socket closes, stdin hits EOF, the server exits and Docker
removes the container (``auto_remove``). Files move through the Engine API archive calls.
"""

from __future__ import annotations

import atexit
import errno
import io
import itertools
import logging
import os
import posixpath
import re
import secrets
import socket
import tarfile
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

import docker
import docker.errors
from docker.types import LogConfig

from terminal_agent.errors import DockerNotAvailableError, SandboxError, SandboxUnavailableError
from terminal_agent.interfaces import ExecResult
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.shell_protocol import (
    STDOUT,
    DockerStreamDemuxer,
    Reply,
    ReplyDecoder,
    bootstrap_payload,
    encode_request,
    server_command,
)
from terminal_agent.tasks.model import TaskLimits

logger = logging.getLogger(__name__)

_CLIENT_LOCK = threading.Lock()
_CLIENTS: dict[tuple[int, float], docker.DockerClient] = {}
_LIVE: "weakref.WeakSet[DockerSandbox]" = weakref.WeakSet()
_STDERR_TAIL = 4096
_RECV = 1 << 18


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


def _open_attach_socket(api: docker.APIClient, container_id: str) -> tuple[socket.socket, bytes]:
    """Raw socket attached to the container's stdin/stdout/stderr, plus bytes read past the HTTP head.

    Speaks the HTTP upgrade itself on a fresh connection so that the socket belongs to us alone.
    """
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    parsed = urlparse(host)
    if parsed.scheme == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        target: Any = parsed.path
    elif parsed.scheme == "tcp" and os.environ.get("DOCKER_TLS_VERIFY", "") in ("", "0"):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        target = (parsed.hostname, parsed.port or 2375)
    else:
        raise SandboxUnavailableError(f"DOCKER_HOST {host!r} is not supported for attach (use a unix socket)")
    query = urlencode({"stream": 1, "stdin": 1, "stdout": 1, "stderr": 1})
    request = (
        f"POST /v{api.api_version}/containers/{container_id}/attach?{query} HTTP/1.1\r\n"
        "Host: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n"
    ).encode()
    sock.settimeout(30)
    sock.connect(target)
    sock.sendall(request)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            raise SandboxUnavailableError("Docker closed the attach connection")
        head += chunk
    head, rest = head.split(b"\r\n\r\n", 1)
    status_line = head.split(b"\r\n", 1)[0].decode(errors="replace")
    if " 101 " not in status_line and " 200 " not in status_line:
        sock.close()
        raise SandboxUnavailableError(f"attach to {container_id[:12]} failed: {status_line}")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    return sock, rest


class DockerSandbox:
    """A running container with a persistent shell. See :class:`terminal_agent.interfaces.Sandbox`."""

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
        self._id = container_id
        self._sock = sock
        self._client = client
        self.image = image
        self.limits = limits
        self.config = config
        self.run_id = run_id
        self._demuxer = DockerStreamDemuxer()
        self._decoder = ReplyDecoder()
        self._replies: list[Reply] = []
        self._stderr_tail = b""
        self._lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._counter = itertools.count(1)
        self._closed = False
        self._broken: str | None = None
        self.server_info: dict[str, Any] = {}
        self.created_at = time.monotonic()
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
    ) -> "DockerSandbox":
        """Create, attach and start a container of ``image`` and wait for its shell server.

        Raises :class:`SandboxUnavailableError` (image missing, no python3 in it, daemon error)
        or :class:`DockerNotAvailableError`.
        """
        limits = limits or TaskLimits()
        config = config or SandboxConfig()
        run_id = run_id or f"pid{os.getpid()}"
        client = client or docker_client(config.docker_timeout_s)
        api = client.api
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
        container_id = created["Id"]
        sock = None
        sandbox = None
        try:
            sock, rest = _open_attach_socket(api, container_id)
            sandbox = cls(
                container_id, sock, client=client, image=image, limits=limits, config=config, run_id=run_id
            )
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
                _remove_quietly(api, container_id)
            if isinstance(exc, SandboxError):
                raise
            if isinstance(exc, docker.errors.DockerException | OSError):
                raise SandboxUnavailableError(f"cannot start a container of {image!r}: {exc}") from exc
            raise

    @property
    def id(self) -> str:
        return self._id

    def close(self) -> None:
        """Close the attach socket (the server then kills everything and exits) and remove the container.

        Idempotent; never raises.
        """
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
            _remove_quietly(self._client.api, self._id)
        except Exception:  # noqa: BLE001 - close never raises
            logger.debug("removing %s failed", self._id[:12], exc_info=True)
        _LIVE.discard(self)

    def __enter__(self) -> "DockerSandbox":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DockerSandbox({self._id[:12]}, image={self.image!r})"

    def is_alive(self) -> bool:
        """True while the container and its shell answer (a command in flight counts as alive)."""
        if self._closed or self._broken:
            return False
        if not self._lock.acquire(timeout=0.05):
            return True
        try:
            self._call_locked({"op": "ping"}, 10.0)
            return True
        except SandboxError:
            return False
        finally:
            self._lock.release()

    # --- commands -------------------------------------------------------------------------------
    def bound_timeout(self, timeout: float | None) -> float:
        """The deadline a command actually gets: the default when None, capped at the configured maximum."""
        if timeout is None:
            timeout = self.limits.command_timeout_s or self.config.default_command_timeout_s
        if timeout != timeout:  # NaN would reach the server's select() and leave the command without a deadline
            raise ValueError("command timeout is NaN; give a number of seconds")
        return float(min(max(timeout, 0.001), self.config.max_command_timeout_s))

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
        """Run ``command`` with ``bash -c`` in the persistent shell.

        ``workdir`` / ``env`` apply to this command only, and such a command (like a ``stateless``
        one) leaves the shell's persistent working directory and exported environment unchanged;
        otherwise both are carried to the next command. ``block=False`` starts the command in the
        background (output discarded) and returns at once; it is killed by
        :meth:`kill_agent_processes` and :meth:`close`. Raises :class:`SandboxError` when the
        sandbox is broken; a failing or timed-out command is a result.
        """
        started = time.monotonic()
        if "\0" in command:
            return ExecResult(exit_code=2, output="bash: the command contains a NUL byte\n", duration_s=0.0)
        for key in env or {}:
            if not key or "=" in key or "\0" in key:
                raise ValueError(f"invalid environment variable name {key!r}")
        deadline = self.bound_timeout(timeout)
        request: dict[str, Any] = {
            "op": "exec",
            "cmd": command,
            "tag": secrets.token_hex(8),
            "timeout": deadline,
            "merge": merge_stderr,
            "stateless": stateless,
            "block": block,
            "cap": self.config.output_cap_bytes,
        }
        if workdir:
            request["cwd"] = workdir
        if env:
            request["env"] = dict(env)
        reply = self._call(request, deadline + self.config.reply_grace_s)
        header = reply.header
        parts = reply.parts
        output = self._render(parts[0] if parts else b"", int(header.get("out_cut", 0)))
        stderr = self._render(parts[1], int(header.get("err_cut", 0))) if len(parts) > 1 else ""
        bytes_cut = int(header.get("out_cut", 0)) + int(header.get("err_cut", 0))
        return ExecResult(
            exit_code=int(header["exit_code"]),
            output=output,
            stderr=stderr,
            truncated=bytes_cut > 0,
            bytes_cut=bytes_cut,
            duration_s=time.monotonic() - started,
            timed_out=bool(header.get("timed_out")),
            oom_killed=bool(header.get("oom_killed")),
        )

    def _render(self, data: bytes, cut: int) -> str:
        if not cut:
            return data.decode("utf-8", errors="replace")
        half = max(1, self.config.output_cap_bytes // 2)
        head = data[:half].decode("utf-8", errors="replace")
        tail = data[half:].decode("utf-8", errors="replace")
        return f"{head}\n[... {cut} bytes cut ...]\n{tail}"

    def kill_agent_processes(self) -> int:
        """Kill every process in the container except init and the shell server; return how many."""
        reply = self._call({"op": "kill_all"}, 30.0)
        return int(reply.header.get("killed", 0))

    def reset_shell_state(self) -> None:
        """Forget the persistent working directory and environment (back to the image's)."""
        self._call({"op": "reset_state"}, 10.0)

    # --- files ----------------------------------------------------------------------------------
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace ``path`` (absolute; parents created) with ``data`` through ``put_archive``."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"write_file takes bytes, not {type(data).__name__}")
        path = _absolute(path)
        parent, name = posixpath.split(path)
        if not name:
            raise IsADirectoryError(path)
        data = bytes(data)
        self._call({"op": "prepare_write", "path": path}, 30.0)  # parents; refuse to replace a directory
        with tempfile.SpooledTemporaryFile(max_size=32 << 20) as archive:
            with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = mode
                info.mtime = int(time.time())
                tar.addfile(info, io.BytesIO(data))
            self._put_archive(parent, archive, path)

    def upload_dir(self, local_dir: Path | str, remote_dir: str) -> None:
        """Copy the contents of ``local_dir`` into ``remote_dir`` (created when missing), owned by root."""
        local = Path(local_dir)
        if not local.is_dir():
            raise NotADirectoryError(str(local))
        remote_dir = _absolute(remote_dir)

        def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        self._call({"op": "mkdirs", "path": remote_dir}, 30.0)
        with tempfile.SpooledTemporaryFile(max_size=32 << 20) as archive:
            with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for child in sorted(local.iterdir()):
                    tar.add(str(child), arcname=child.name, recursive=True, filter=as_root)
            self._put_archive(remote_dir, archive, remote_dir)

    def read_file(self, path: str) -> bytes:
        """Whole content of ``path`` (symlinks followed) through ``get_archive``.

        Raises ``FileNotFoundError`` when absent, ``IsADirectoryError`` for a directory.
        """
        path = _absolute(path)
        api = self._client.api
        for _ in range(16):
            self._check_usable()
            try:
                stream, stat = api.get_archive(self._id, path)
            except docker.errors.NotFound as exc:
                if self._container_gone():
                    raise self._broken_error("container is gone") from exc
                raise FileNotFoundError(2, "No such file or directory", path) from None
            except docker.errors.APIError as exc:
                if self._container_gone():
                    raise self._broken_error(f"get_archive({path}) failed: {exc}") from exc
                message = _daemon_message(exc)
                code = errno.ELOOP if "too many links" in message else errno.EIO
                raise OSError(code, f"cannot read: {message}", path) from None
            except docker.errors.DockerException as exc:
                raise self._broken_error(f"get_archive({path}) failed: {exc}") from exc
            file_mode = int(stat.get("mode", 0))
            if file_mode & (1 << 31):
                raise IsADirectoryError(21, "Is a directory", path)
            if file_mode & (1 << 27):
                target = stat.get("linkTarget") or ""
                for _chunk in stream:
                    pass
                path = target if target.startswith("/") else posixpath.normpath(
                    posixpath.join(posixpath.dirname(path), target)
                )
                continue
            with tempfile.SpooledTemporaryFile(max_size=32 << 20) as archive:
                for chunk in stream:
                    archive.write(chunk)
                archive.seek(0)
                with tarfile.open(fileobj=archive, mode="r:") as tar:
                    for member in tar:
                        if member.isfile():
                            extracted = tar.extractfile(member)
                            assert extracted is not None
                            return extracted.read()
            raise FileNotFoundError(2, "Not a regular file", path)
        raise OSError(40, "Too many levels of symbolic links", path)

    def _put_archive(self, remote_dir: str, archive: Any, what: str) -> None:
        api = self._client.api
        for attempt in range(2):
            self._check_usable()
            archive.seek(0)
            try:
                api.put_archive(self._id, remote_dir, archive)
                return
            except docker.errors.NotFound as exc:
                if self._container_gone():
                    raise self._broken_error("container is gone") from exc
                if attempt:
                    raise FileNotFoundError(2, "No such file or directory", remote_dir) from None
                self._call({"op": "mkdirs", "path": remote_dir}, 30.0)
            except docker.errors.APIError as exc:
                if self._container_gone():
                    raise self._broken_error(f"put_archive({what}) failed: {exc}") from exc
                raise OSError(errno.EIO, f"cannot write: {_daemon_message(exc)}", what) from None
            except docker.errors.DockerException as exc:
                raise self._broken_error(f"put_archive({what}) failed: {exc}") from exc

    def _container_gone(self) -> bool:
        try:
            state = self._client.api.inspect_container(self._id)["State"]
            return not state.get("Running", False)
        except docker.errors.NotFound:
            return True
        except docker.errors.DockerException:
            return True

    # --- wire -----------------------------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._closed:
            raise SandboxError(f"sandbox {self._id[:12]} is closed")
        if self._broken:
            raise SandboxError(f"sandbox {self._id[:12]} is broken: {self._broken}")

    def _call(self, request: dict[str, Any], wait_s: float) -> Reply:
        with self._lock:
            return self._call_locked(request, wait_s)

    def _call_locked(self, request: dict[str, Any], wait_s: float) -> Reply:
        self._check_usable()
        request["id"] = f"{next(self._counter)}-{secrets.token_hex(4)}"
        try:
            self._sock.sendall(encode_request(request))
        except OSError as exc:
            raise self._broken_error(f"cannot send to the shell: {exc}") from exc
        reply = self._await(request["id"], time.monotonic() + wait_s)
        if not reply.header.get("ok", False):
            if reply.header.get("errno"):
                raise OSError(int(reply.header["errno"]), str(reply.header.get("error")), request.get("path"))
            raise SandboxError(f"shell server error: {reply.header.get('error')}")
        return reply

    def _ingest(self, data: bytes) -> None:
        for stream, payload in self._demuxer.feed(data):
            if stream == STDOUT:
                self._replies.extend(self._decoder.feed(payload))
            else:
                self._stderr_tail = (self._stderr_tail + payload)[-_STDERR_TAIL:]
                logger.debug("shell server stderr (%s): %r", self._id[:12], payload[-500:])

    def _await(self, reply_id: str, deadline: float, starting: bool = False) -> Reply:
        sock = self._sock
        while True:
            for index, reply in enumerate(self._replies):
                if reply.id == reply_id:
                    del self._replies[index]
                    return reply
            self._replies.clear()  # stale replies of abandoned requests
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._broken_error("the shell did not answer in time", starting)
            sock.settimeout(remaining)
            try:
                data = sock.recv(_RECV)
            except TimeoutError:
                continue
            except OSError as exc:
                raise self._broken_error(f"lost the shell socket: {exc}", starting) from exc
            if not data:
                raise self._broken_error("the container's shell exited", starting)
            self._ingest(data)

    def _broken_error(self, reason: str, starting: bool = False) -> SandboxError:
        if self._closed:
            return SandboxError(f"sandbox {self._id[:12]} is closed")
        stderr = self._stderr_tail.decode("utf-8", errors="replace").strip()
        detail = reason
        if stderr:
            detail += f"; server stderr: {stderr[-600:]}"
        self._broken = self._broken or detail
        if starting:
            if "python3" in stderr and ("No such file" in stderr or "not found" in stderr):
                return SandboxUnavailableError(
                    f"image {self.image!r} has no python3, which the sandbox's shell server needs ({stderr[-200:]})"
                )
            return SandboxUnavailableError(f"container of {self.image!r} did not come up: {detail}")
        return SandboxError(f"sandbox {self._id[:12]} is broken: {detail}")


def _daemon_message(exc: docker.errors.APIError) -> str:
    """The daemon's explanation without the host's overlay paths (``.../merged/tmp/x`` -> ``/tmp/x``)."""
    text = str(exc.explanation or exc)
    return re.sub(r"/\S*/merged(?=/)", "", text)


def _absolute(path: str) -> str:
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"sandbox paths must be absolute, got {path!r}")
    return posixpath.normpath(path)


def _remove_quietly(api: docker.APIClient, container_id: str) -> None:
    try:
        api.remove_container(container_id, force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if exc.status_code != 409:  # 409: removal already in progress (auto_remove)
            logger.warning("could not remove container %s: %s", container_id[:12], exc)


@atexit.register
def _close_live_sandboxes() -> None:
    """Backstop for a normal interpreter exit (SIGKILL runs none of this: the dead-man switch covers it)."""
    for sandbox in list(_LIVE):
        sandbox.close()
