"""Host side of the persistent-shell protocol spoken over a container's attached socket.

Wire format (the server is ``assets/shell_server.py``):

* host -> container (stdin): one ASCII JSON object per line. ASCII-only keeps Docker's
  detach-key sequence (ctrl-p ctrl-q) out of the stream.
* container -> host: the attach socket multiplexes stdout and stderr in frames of an 8-byte
  header because the container has no TTY (``docker/attach_stream.py`` reads them). On stdout the
  server writes replies: ``b"TA1 " + %08x header length + %08x body length + b"\\n"``, then the
  header JSON and the body, whose parts' lengths the header lists in ``parts``.
* bootstrap: the container starts ``python3 -c BOOTSTRAP``, which reads one decimal length line
  and that many bytes of server source from stdin, then runs it; nothing is written to disk. The
  server re-executes itself from that source (in a memfd) as ``ta-sandbox``; see its
  ``stay_out_of_reach``.
"""

from __future__ import annotations

import json
import posixpath
import secrets
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from terminal_agent.interfaces import ExecResult

MAGIC = b"TA1 "
PREAMBLE_LEN = len(MAGIC) + 8 + 8 + 1
TAG_ENV_VAR = "TA_CMD_TAG"

BOOTSTRAP = (
    "import os\n"
    "def R(n):\n"
    " b=b''\n"
    " while len(b)<n:\n"
    "  c=os.read(0,n-len(b))\n"
    "  if not c:os._exit(0)\n"
    "  b+=c\n"
    " return b\n"
    "n=b''\n"
    "while not n.endswith(b'\\n'):n+=R(1)\n"
    "s=R(int(n))\n"
    "exec(compile(s,'ta-shell-server','exec'),{'__name__':'__main__','TA_SOURCE':s})\n"
)
"""Tiny loader run by ``python3 -c``; reads the server source from stdin (and hands it to the
server, which re-executes itself from it under a neutral name)."""


def server_source() -> bytes:
    """The in-container server's source (ASCII)."""
    return resources.files("terminal_agent.sandbox").joinpath("assets/shell_server.py").read_bytes()


def server_command(ttl_s: float) -> list[str]:
    """argv of the container's main process (run under the init process)."""
    return ["python3", "-I", "-S", "-c", BOOTSTRAP, f"{ttl_s:.0f}"]


def bootstrap_payload() -> bytes:
    source = server_source()
    return b"%d\n" % len(source) + source


def encode_request(request: dict[str, Any]) -> bytes:
    """One request line (ASCII JSON)."""
    return json.dumps(request, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


@dataclass
class Reply:
    """One decoded server reply."""

    header: dict[str, Any]
    parts: list[bytes] = field(default_factory=list)

    @property
    def id(self) -> Any:
        return self.header.get("id")


class ReplyDecoder:
    """Reassembles replies from the server's stdout bytes."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.garbage = 0
        """Bytes skipped because they did not start a reply (should stay 0)."""

    def feed(self, data: bytes) -> list[Reply]:
        self._buffer += data
        replies: list[Reply] = []
        buffer = self._buffer
        while True:
            start = buffer.find(MAGIC)
            if start < 0:
                keep = len(MAGIC) - 1
                if len(buffer) > keep:
                    self.garbage += len(buffer) - keep
                    del buffer[: len(buffer) - keep]
                return replies
            if start:
                self.garbage += start
                del buffer[:start]
            if len(buffer) < PREAMBLE_LEN:
                return replies
            try:
                head_len = int(buffer[4:12], 16)
                body_len = int(buffer[12:20], 16)
            except ValueError:
                self.garbage += 1
                del buffer[:1]
                continue
            total = PREAMBLE_LEN + head_len + body_len
            if len(buffer) < total:
                return replies
            header = json.loads(bytes(buffer[PREAMBLE_LEN : PREAMBLE_LEN + head_len]))
            body = bytes(buffer[PREAMBLE_LEN + head_len : total])
            del buffer[:total]
            parts: list[bytes] = []
            offset = 0
            for size in header.get("parts", []):
                parts.append(body[offset : offset + size])
                offset += size
            replies.append(Reply(header, parts))


# --- exec requests and results (shared by every backend that runs this server) ----------------------
NUL_COMMAND_RESULT = ExecResult(exit_code=2, output="bash: the command contains a NUL byte\n", duration_s=0.0)


def exec_request(
    command: str,
    deadline_s: float,
    *,
    cap: int,
    workdir: str | None = None,
    env: dict[str, str] | None = None,
    merge_stderr: bool = True,
    stateless: bool = False,
    block: bool = True,
) -> dict[str, Any]:
    """The ``exec`` request of one command; a ``ValueError`` for an invalid environment name."""
    for key in env or {}:
        if not key or "=" in key or "\0" in key:
            raise ValueError(f"invalid environment variable name {key!r}")
    request: dict[str, Any] = {
        "op": "exec",
        "cmd": command,
        "tag": secrets.token_hex(8),
        "timeout": deadline_s,
        "merge": merge_stderr,
        "stateless": stateless,
        "block": block,
        "cap": cap,
    }
    if workdir:
        request["cwd"] = workdir
    if env:
        request["env"] = dict(env)
    return request


def render_capture(data: bytes, cut: int, cap: int) -> str:
    """Decoded capture; when the middle was cut, a marker with the count sits between head and tail."""
    if not cut:
        return data.decode("utf-8", errors="replace")
    half = max(1, cap // 2)
    head = data[:half].decode("utf-8", errors="replace")
    tail = data[half:].decode("utf-8", errors="replace")
    return f"{head}\n[... {cut} bytes cut ...]\n{tail}"


def exec_result(reply: Reply, cap: int, started: float) -> ExecResult:
    """The :class:`ExecResult` of an ``exec`` reply (``started``: the caller's ``time.monotonic()``)."""
    header, parts = reply.header, reply.parts
    out_cut, err_cut = int(header.get("out_cut", 0)), int(header.get("err_cut", 0))
    output = render_capture(parts[0] if parts else b"", out_cut, cap)
    stderr = render_capture(parts[1], err_cut, cap) if len(parts) > 1 else ""
    return ExecResult(
        exit_code=int(header["exit_code"]),
        output=output,
        stderr=stderr,
        truncated=out_cut + err_cut > 0,
        bytes_cut=out_cut + err_cut,
        duration_s=time.monotonic() - started,
        timed_out=bool(header.get("timed_out")),
        oom_killed=bool(header.get("oom_killed")),
    )


def bound_timeout(timeout: float | None, default_s: float, max_s: float) -> float:
    """The deadline a command actually gets: ``default_s`` when None, capped at ``max_s``; NaN is a ValueError."""
    if timeout is None:
        timeout = default_s
    if timeout != timeout:  # NaN would reach the server's select() and leave the command without a deadline
        raise ValueError("command timeout is NaN; give a number of seconds")
    return float(min(max(timeout, 0.001), max_s))


def absolute_path(path: str) -> str:
    """``path`` normalized; a ``ValueError`` unless it is an absolute string."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"sandbox paths must be absolute, got {path!r}")
    return posixpath.normpath(path)
