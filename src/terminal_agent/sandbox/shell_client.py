"""The client side of the persistent shell server, shared by every sandbox that runs one.

A Docker container (attach socket) and a bwrap sandbox (its stdin/stdout pipes) speak the same
request/reply protocol (``shell_protocol``) to the same server (``assets/shell_server.py``). What
differs is only the transport; :class:`ShellServerClient` holds everything else: the request lock
and ids, waiting for a reply, the broken/closed bookkeeping and its messages, and the
:class:`~terminal_agent.interfaces.Sandbox` methods that are one request each (``exec``,
``kill_agent_processes``, ``reset_shell_state``, ``is_alive``).

A backend subclasses it and provides the transport: :meth:`_send` (write all bytes) and
:meth:`_receive` (bytes that arrived within a timeout, ``None`` on timeout, ``b""`` at end of
stream), plus :meth:`_ingest` when its stream carries more than the server's stdout.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from typing import Any

from terminal_agent.errors import SandboxError, SandboxUnavailableError
from terminal_agent.interfaces import ExecResult
from terminal_agent.sandbox import shell_protocol
from terminal_agent.sandbox.shell_protocol import Reply, ReplyDecoder, encode_request

STDERR_TAIL = 4096
"""Bytes of the server's stderr kept for error messages."""


class ShellServerClient:
    """Talks to one shell server; see the module docstring. Subclasses set ``image``, ``limits``,
    ``config`` and ``server_info`` and call :meth:`_init_client` first thing."""

    image: str
    limits: Any
    config: Any
    server_info: dict[str, Any]
    _kind = "sandbox"
    """What the server runs in, for messages ("the container's shell exited")."""

    def _init_client(self, sandbox_id: str) -> None:
        self._id = sandbox_id
        self._decoder = ReplyDecoder()
        self._replies: list[Reply] = []
        self._stderr_tail = b""
        self._lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._counter = itertools.count(1)
        self._closed = False
        self._broken: str | None = None

    # --- transport (the backend's) ----------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        """Write all of ``data`` to the server; ``OSError`` / ``ValueError`` when the channel is gone."""
        raise NotImplementedError

    def _receive(self, timeout: float, starting: bool) -> bytes | None:
        """What arrived within ``timeout`` seconds: ``None`` when nothing did, ``b""`` at end of stream."""
        raise NotImplementedError

    def _ingest(self, data: bytes) -> None:
        """Take received bytes (the server's stdout unless the backend's stream multiplexes more)."""
        self._replies.extend(self._decoder.feed(data))

    def _settle_before_report(self) -> None:
        """Called before a broken channel is described (a backend may wait for the last stderr)."""

    def _broken_detail(self, reason: str, stderr: str) -> str:
        """The text recorded when the channel breaks (a backend may add what it knows)."""
        return reason + (f"; server stderr: {stderr[-600:]}" if stderr else "")

    @property
    def _short_id(self) -> str:
        return self._id

    # --- the Sandbox methods that are one request ---------------------------------------------------
    def __enter__(self) -> "ShellServerClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()  # type: ignore[attr-defined]

    def is_alive(self) -> bool:
        """True while the sandbox and its shell answer (a command in flight counts as alive)."""
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

    def bound_timeout(self, timeout: float | None) -> float:
        """The deadline a command actually gets: the default when None, capped at the configured maximum."""
        default = self.limits.command_timeout_s or self.config.default_command_timeout_s
        return shell_protocol.bound_timeout(timeout, default, self.config.max_command_timeout_s)

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
        """See :meth:`Sandbox.exec <terminal_agent.interfaces.Sandbox.exec>`.

        One ``exec`` request to the shell server. A ``workdir`` / ``env`` / ``stateless`` command runs
        in a fresh bash and leaves the persistent directory and exported environment as they were; a
        ``block=False`` one is killed by :meth:`kill_agent_processes` and ``close``.
        """
        started = time.monotonic()
        if "\0" in command:
            return shell_protocol.NUL_COMMAND_RESULT
        deadline = self.bound_timeout(timeout)
        request = shell_protocol.exec_request(
            command, deadline, cap=self.config.output_cap_bytes, workdir=workdir, env=env,
            merge_stderr=merge_stderr, stateless=stateless, block=block,
        )
        reply = self._call(request, deadline + self.config.reply_grace_s)
        return shell_protocol.exec_result(reply, self.config.output_cap_bytes, started)

    def kill_agent_processes(self) -> int:
        """Kill every process in the sandbox except its init and the shell server; return how many."""
        return int(self._call({"op": "kill_all"}, 30.0).header.get("killed", 0))

    def freeze_agent_processes(self) -> dict[str, list[int]]:
        """Close the idle persistent shell (as :meth:`kill_agent_processes` does), then SIGSTOP every process in
        the sandbox except its init and the shell server, until none runs.

        The grader's freeze of the agent's processes while it inspects and stages (its verifier thaws them
        for the tests of a task that keeps them). ``{"stopped": pids stopped here, "already_stopped": pids the
        agent had stopped itself, "running": pids that could not be stopped}``. Raises ``SandboxError``
        when broken."""
        header = self._call({"op": "stop_all"}, 30.0).header
        return {key: [int(pid) for pid in header.get(key, [])] for key in ("stopped", "already_stopped", "running")}

    def reset_shell_state(self) -> None:
        """Forget the persistent working directory and environment (back to the image's)."""
        self._call({"op": "reset_state"}, 10.0)

    @property
    def image_workdir(self) -> str:
        return str(self.server_info.get("cwd") or "/")

    @property
    def service_pids(self) -> tuple[int, ...]:
        pid = self.server_info.get("pid")
        return (int(pid),) if pid else ()

    # --- wire ---------------------------------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._closed:
            raise SandboxError(f"sandbox {self._short_id} is closed")
        if self._broken:
            raise SandboxError(f"sandbox {self._short_id} is broken: {self._broken}")

    def _call(self, request: dict[str, Any], wait_s: float) -> Reply:
        with self._lock:
            return self._call_locked(request, wait_s)

    def _call_locked(self, request: dict[str, Any], wait_s: float) -> Reply:
        self._check_usable()
        request["id"] = f"{next(self._counter)}-{secrets.token_hex(4)}"
        try:
            self._send(encode_request(request))
        except (OSError, ValueError) as exc:
            raise self._broken_error(f"cannot send to the shell: {exc}") from exc
        reply = self._await(request["id"], time.monotonic() + wait_s)
        if not reply.header.get("ok", False):
            if reply.header.get("errno"):
                raise OSError(int(reply.header["errno"]), str(reply.header.get("error")), request.get("path") or request.get("dest"))
            raise SandboxError(f"shell server error: {reply.header.get('error')}")
        return reply

    def _await(self, reply_id: str, deadline: float, starting: bool = False) -> Reply:
        while True:
            for index, reply in enumerate(self._replies):
                if reply.id == reply_id:
                    del self._replies[index]
                    return reply
            self._replies.clear()  # stale replies of abandoned requests
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._broken_error("the shell did not answer in time", starting)
            data = self._receive(remaining, starting)
            if data is None:
                continue
            if not data:
                raise self._broken_error(f"the {self._kind}'s shell exited", starting)
            self._ingest(data)

    def _broken_error(self, reason: str, starting: bool = False) -> SandboxError:
        if self._closed:
            return SandboxError(f"sandbox {self._short_id} is closed")
        self._settle_before_report()
        stderr = self._stderr_tail.decode("utf-8", errors="replace").strip()
        detail = self._broken_detail(reason, stderr)
        self._broken = self._broken or detail
        if starting:
            if "python3" in stderr and ("No such file" in stderr or "not found" in stderr):
                return SandboxUnavailableError(
                    f"image {self.image!r} has no python3, which the sandbox's shell server needs ({stderr[-200:]})"
                )
            return SandboxUnavailableError(f"{self._kind} of {self.image!r} did not come up: {detail}")
        return SandboxError(f"sandbox {self._short_id} is broken: {detail}")


__all__ = ["STDERR_TAIL", "ShellServerClient"]
