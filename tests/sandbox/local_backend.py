"""A ``local`` sandbox backend for tests only: no isolation, commands run on this host in a temporary directory.

It exists to show that a backend is one module plus one registry line: it is defined and registered here,
with no edit anywhere else, and then the env, the episode loop, the pool and cleanup (the runner's sweep,
the daemon, ``terminal-agent cleanup``) use it through the registry like the built-in ones.

What it is: each sandbox is ``ROOT/sandboxes/<id>/`` holding ``owner.json`` (the same owner labels as a
container, ``sandbox.labels``) and ``work/``, the working directory of its commands. Each command is a fresh
``bash -c`` in its own session (no persistent shell), killed as a group at its deadline. Files can be read and
written only inside the sandbox's directory (anything else is a ``PermissionError``: the host is not the
sandbox's to change). It serves only the agent's half of the contract (``interfaces.Sandbox``), not the
grader's (``interfaces.GradingSandbox``): a verifier's process sweep would reach the whole host. An episode
on it runs, and ends not scored (error kind ``sandbox``).

``python local_backend.py hold`` starts one sandbox and sleeps (a leak maker for the tests: SIGKILL it).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

from terminal_agent.errors import SandboxError, SandboxUnavailableError
from terminal_agent.interfaces import ExecResult, Sandbox
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.backends import LeakedObject
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.registry import SANDBOX_BACKENDS
from terminal_agent.tasks.model import Task, TaskLimits

NAME = "local"
IMAGE = "host"
"""The only image of this backend: the host itself."""
_LIVE: "weakref.WeakSet[LocalSandbox]" = weakref.WeakSet()


def _capped(data: bytes, cap: int) -> tuple[str, int]:
    """Head and tail of ``data`` within ``cap`` bytes, and how many bytes were cut from the middle."""
    if len(data) <= cap:
        return data.decode("utf-8", errors="replace"), 0
    half = cap // 2
    return (data[:half] + data[-half:]).decode("utf-8", errors="replace"), len(data) - 2 * half


class LocalSandbox:
    """One directory of this host; see the module docstring."""

    def __init__(self, directory: Path, config: SandboxConfig, limits: TaskLimits, env: dict[str, str]) -> None:
        self.directory = directory
        self.work = directory / "work"
        self.config = config
        self.limits = limits
        self._env = dict(env)
        self._closed = False
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        _LIVE.add(self)

    @property
    def id(self) -> str:
        return self.directory.name

    # --- agent-facing ------------------------------------------------------------------------------
    def exec(self, command: str, timeout: float | None = None, *, workdir: str | None = None,
             env: dict[str, str] | None = None, merge_stderr: bool = True, stateless: bool = False,
             block: bool = True) -> ExecResult:
        self._check_usable()
        deadline = min(timeout or self.config.default_command_timeout_s, self.config.max_command_timeout_s)
        cwd = self._inside(workdir) if workdir else self.work
        started = time.monotonic()
        proc = subprocess.Popen(
            ["bash", "-c", command], cwd=cwd, env={**os.environ, **self._env, **(env or {}), "HOME": str(self.work)},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, start_new_session=True,
        )
        with self._lock:
            self._groups.add(proc.pid)
        if not block:
            return ExecResult(0, "", duration_s=time.monotonic() - started)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=deadline)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._kill_group(proc.pid)
            out, err = proc.communicate()
        with self._lock:
            self._groups.discard(proc.pid)
        cap = self.config.output_cap_bytes
        output, cut = _capped(out or b"", cap)
        stderr, cut_err = _capped(err or b"", cap)
        return ExecResult(124 if timed_out else proc.returncode, output, stderr, truncated=bool(cut or cut_err),
                          bytes_cut=cut + cut_err, duration_s=time.monotonic() - started, timed_out=timed_out)

    def read_file(self, path: str) -> bytes:
        self._check_usable()
        return self._inside(path).read_bytes()

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self._check_usable()
        target = self._inside(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(data))
        target.chmod(mode)

    def upload_dir(self, local_dir: Path | str, remote_dir: str) -> None:
        self._check_usable()
        shutil.copytree(local_dir, self._inside(remote_dir), dirs_exist_ok=True)

    def is_alive(self) -> bool:
        return not self._closed and self.work.is_dir()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            groups = list(self._groups)
        for group in groups:
            self._kill_group(group)
        shutil.rmtree(self.directory, ignore_errors=True)
        _LIVE.discard(self)

    def __enter__(self) -> "LocalSandbox":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- internals ---------------------------------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._closed or not self.work.is_dir():
            raise SandboxError(f"local sandbox {self.id} is closed or its directory is gone")

    def _inside(self, path: str) -> Path:
        """``path`` (absolute, as the contract says) when it lies in this sandbox's directory."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"sandbox paths must be absolute, got {path!r}")
        resolved = Path(os.path.realpath(path))
        if resolved != self.directory and self.directory not in resolved.parents:
            raise PermissionError(13, "outside the local sandbox's directory", path)
        return resolved

    @staticmethod
    def _kill_group(pgid: int) -> None:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass


class LocalBackend:
    """The hooks of :class:`terminal_agent.sandbox.backends.SandboxBackend` for :class:`LocalSandbox`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def sandboxes(self) -> Path:
        return self.root / "sandboxes"

    def resolve_task_image(self, config: SandboxConfig, task: Task) -> str:
        return IMAGE

    def start(self, config: SandboxConfig, image_ref: str, limits: TaskLimits, run_id: str | None,
              env: dict[str, str], *, verifier_network: bool | None = None) -> Sandbox:
        if image_ref != IMAGE:
            raise SandboxUnavailableError(f"the local test backend has one image, {IMAGE!r}, not {image_ref!r}")
        directory = self.sandboxes() / f"lo-{secrets.token_hex(6)}"
        (directory / "work").mkdir(parents=True)
        labels = sandbox_labels.owner_labels(run_id or f"pid{os.getpid()}", config.ttl_s, IMAGE)
        (directory / "owner.json").write_text(json.dumps({"labels": labels}))
        return LocalSandbox(directory, config, limits, env)

    def list_leaked(self, config: SandboxConfig, now: float | None = None) -> list[LeakedObject]:
        leaked = []
        for directory in sorted(self.sandboxes().glob("lo-*")):
            try:
                labels = json.loads((directory / "owner.json").read_text())["labels"]
            except (OSError, ValueError, KeyError):
                labels = {}
            verdict = sandbox_labels.judge(labels, now) if labels else sandbox_labels.Verdict(True, "no owner record")
            if verdict.remove:
                leaked.append(LeakedObject("local", directory.name, str(directory), labels.get(sandbox_labels.RUN_ID, ""),
                                           verdict.reason, backend=NAME))
        return leaked

    def sweep_leaked(self, config: SandboxConfig, leaked: list[LeakedObject] | None = None,
                     now: float | None = None) -> list[LeakedObject]:
        found = self.list_leaked(config, now) if leaked is None else leaked
        removed = []
        for obj in found:
            shutil.rmtree(self.sandboxes() / obj.id, ignore_errors=True)
            if not (self.sandboxes() / obj.id).exists():
                removed.append(obj)
        return removed

    def capacity(self, config: SandboxConfig) -> None:
        return None

    def close(self) -> None:
        for sandbox in list(_LIVE):
            sandbox.close()


ROOT = Path(tempfile.gettempdir()) / "terminal-agent-local-tests"
BACKEND = LocalBackend(ROOT)
if NAME not in SANDBOX_BACKENDS:  # imported both as a test helper and as a script
    SANDBOX_BACKENDS.register(NAME)(BACKEND)  # the one registry line of this backend

if __name__ == "__main__" and sys.argv[1:2] == ["hold"]:
    held = BACKEND.start(SandboxConfig(backend=NAME), IMAGE, TaskLimits(), "test-local-leak", {})
    print(held.id, flush=True)
    time.sleep(600)
