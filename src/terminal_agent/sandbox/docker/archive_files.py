"""File transfer with a sandbox's container: the shell server's channel for files, Engine API archives for trees.

``read_file`` / ``write_file`` of files up to :data:`CHANNEL_FILE_MAX_BYTES` travel as the shell
server's ``read_file`` / ``write_file`` requests (base64 in, raw reply parts out: binary-safe,
about one round trip, against 55-70 ms for an archive call) when the server runs as root, so that
owners and permissions are those of an archive unpacked as root. Larger files, a server running as
another user, and ``upload_dir`` go through ``put_archive`` / ``get_archive`` as tar streams.
Neither path builds a shell string or argv from the path; directory creation (and the check that
``write_file`` does not replace a directory, which Docker's untar would delete) is asked of the
shell server.
"""

from __future__ import annotations

import base64
import errno
import functools
import io
import posixpath
import re
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors

from terminal_agent.errors import SandboxError
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.sandbox.shell_protocol import absolute_path, server_source

SPOOL_MAX_BYTES = 32 << 20
"""Archives up to this size are built in memory, larger ones in a temporary file."""
MAX_SYMLINK_HOPS = 16
CHANNEL_FILE_MAX_BYTES = 16 << 20
"""Files up to this size go over the shell server's channel (its memory counts against the container's limit)."""


@functools.cache
def server_has_file_ops() -> bool:
    """Whether the shell server this package streams into containers serves ``read_file`` / ``write_file``."""
    return b"def op_read_file(" in server_source() and b"def op_write_file(" in server_source()


class ArchiveFiles:
    """``write_file`` / ``upload_dir`` / ``read_file`` of one container.

    The owning sandbox lends three callables: ``shell_op(request, wait_s)`` sends a request to the
    shell server, ``check_usable()`` raises when the sandbox is closed or broken, and
    ``broken_error(reason)`` marks the sandbox broken and returns the :class:`SandboxError` to raise.
    A daemon error about the path is an ``OSError``; one while the container is gone breaks the sandbox.
    ``over_channel`` lets files travel over the shell server's channel (see the module docstring).
    """

    def __init__(
        self,
        api: docker.APIClient,
        container_id: str,
        *,
        shell_op: Callable[[dict[str, Any], float], Any],
        check_usable: Callable[[], None],
        broken_error: Callable[[str], SandboxError],
        over_channel: bool = False,
    ) -> None:
        self._over_channel = over_channel and server_has_file_ops()
        self._api = api
        self._id = container_id
        self._shell_op = shell_op
        self._check_usable = check_usable
        self._broken_error = broken_error

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"write_file takes bytes, not {type(data).__name__}")
        path = absolute_path(path)
        parent, name = posixpath.split(path)
        if not name:
            raise IsADirectoryError(path)
        data = bytes(data)
        if self._over_channel and len(data) <= CHANNEL_FILE_MAX_BYTES:
            # the server creates the parents, refuses to replace a directory, writes a temp file and renames it
            request = {"op": "write_file", "path": path, "data": base64.b64encode(data).decode("ascii"), "mode": mode}
            self._shell_op(request, 30.0 + len(data) / 1e6)
            return
        self._shell_op({"op": "prepare_write", "path": path}, 30.0)  # parents; refuse to replace a directory
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_MAX_BYTES) as archive:
            with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = mode
                info.mtime = int(time.time())
                tar.addfile(info, io.BytesIO(data))
            self._put_archive(parent, archive, path)

    def upload_dir(self, local_dir: Path | str, remote_dir: str) -> None:
        local = Path(local_dir)
        if not local.is_dir():
            raise NotADirectoryError(str(local))
        remote_dir = absolute_path(remote_dir)

        def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        self._shell_op({"op": "mkdirs", "path": remote_dir}, 30.0)
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_MAX_BYTES) as archive:
            with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for child in sorted(local.iterdir()):
                    tar.add(str(child), arcname=child.name, recursive=True, filter=as_root)
            self._put_archive(remote_dir, archive, remote_dir)

    def read_file(self, path: str) -> bytes:
        """Symlinks are followed (by the kernel over the channel; here, up to 16 hops, for ``get_archive``)."""
        path = absolute_path(path)
        if self._over_channel:
            try:
                reply = self._shell_op({"op": "read_file", "path": path, "max": CHANNEL_FILE_MAX_BYTES}, 60.0)
                return reply.parts[0] if reply.parts else b""
            except OSError as exc:
                if exc.errno != errno.EFBIG:  # too big for the channel: an archive carries it
                    raise
        for _ in range(MAX_SYMLINK_HOPS):
            self._check_usable()
            try:
                stream, stat = self._api.get_archive(self._id, path)
            except docker.errors.NotFound as exc:
                if self.container_gone():
                    raise self._broken_error("container is gone") from exc
                raise FileNotFoundError(2, "No such file or directory", path) from None
            except docker.errors.APIError as exc:
                if self.container_gone():
                    raise self._broken_error(f"get_archive({path}) failed: {exc}") from exc
                message = daemon_message(exc)
                code = errno.ELOOP if "too many links" in message else errno.EIO
                raise OSError(code, f"cannot read: {message}", path) from None
            except DAEMON_ERRORS as exc:
                raise self._broken_error(f"get_archive({path}) failed: {exc}") from exc
            file_mode = int(stat.get("mode", 0))
            if file_mode & (1 << 31):  # Go's os.ModeDir
                raise IsADirectoryError(21, "Is a directory", path)
            if file_mode & (1 << 27):  # Go's os.ModeSymlink
                target = stat.get("linkTarget") or ""
                for _chunk in stream:
                    pass
                path = target if target.startswith("/") else posixpath.normpath(
                    posixpath.join(posixpath.dirname(path), target)
                )
                continue
            with tempfile.SpooledTemporaryFile(max_size=SPOOL_MAX_BYTES) as archive:
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
        """Unpack ``archive`` into ``remote_dir``; when that is missing, create it and try once more."""
        for attempt in range(2):
            self._check_usable()
            archive.seek(0)
            try:
                self._api.put_archive(self._id, remote_dir, archive)
                return
            except docker.errors.NotFound as exc:
                if self.container_gone():
                    raise self._broken_error("container is gone") from exc
                if attempt:
                    raise FileNotFoundError(2, "No such file or directory", remote_dir) from None
                self._shell_op({"op": "mkdirs", "path": remote_dir}, 30.0)
            except docker.errors.APIError as exc:
                if self.container_gone():
                    raise self._broken_error(f"put_archive({what}) failed: {exc}") from exc
                raise OSError(errno.EIO, f"cannot write: {daemon_message(exc)}", what) from None
            except DAEMON_ERRORS as exc:
                raise self._broken_error(f"put_archive({what}) failed: {exc}") from exc

    def container_gone(self) -> bool:
        """True when the container no longer runs (or the daemon cannot say)."""
        try:
            state = self._api.inspect_container(self._id)["State"]
            return not state.get("Running", False)
        except docker.errors.NotFound:
            return True
        except DAEMON_ERRORS:  # an unreachable daemon cannot serve this container any more
            return True


def daemon_message(exc: docker.errors.APIError) -> str:
    """The daemon's explanation without the host's overlay paths (``.../merged/tmp/x`` -> ``/tmp/x``)."""
    text = str(exc.explanation or exc)
    return re.sub(r"/\S*/merged(?=/)", "", text)

