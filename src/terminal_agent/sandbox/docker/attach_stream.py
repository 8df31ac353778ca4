"""The raw attach socket of a container and the reader of Docker's multiplexed frames.

The socket is opened before the container starts (``stdin_once``), so it is the container's stdin
for its whole life: when the owning process dies the socket closes and the container's main
process reads EOF (the sandbox's dead-man switch). Without a TTY, Docker multiplexes the
container's stdout and stderr on it in frames of an 8-byte header (stream byte, 3 zero bytes,
big-endian u32 length) and the payload.
"""

from __future__ import annotations

import os
import socket
import struct
from typing import Any
from urllib.parse import urlencode, urlparse

import docker

from terminal_agent.errors import SandboxUnavailableError

STDOUT, STDERR = 1, 2
"""Stream bytes of Docker's multiplexed frames."""
RECV_CHUNK = 1 << 18
"""Bytes asked of the socket per ``recv``."""


def open_attach_socket(api: docker.APIClient, container_id: str) -> tuple[socket.socket, bytes]:
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


class DockerStreamDemuxer:
    """Splits Docker's multiplexed attach stream (8-byte frame headers) into (stream, bytes)."""

    _HEADER = struct.Struct(">BxxxL")

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self._buffer += data
        frames: list[tuple[int, bytes]] = []
        buffer = self._buffer
        offset = 0
        while len(buffer) - offset >= 8:
            stream, size = self._HEADER.unpack_from(buffer, offset)
            if len(buffer) - offset - 8 < size:
                break
            frames.append((stream, bytes(buffer[offset + 8 : offset + 8 + size])))
            offset += 8 + size
        if offset:
            del buffer[:offset]
        return frames
