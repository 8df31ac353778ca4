"""BwrapSandbox: a bubblewrap sandbox on an overlay of exported image layers, with the persistent shell on its stdin/stdout.

Start, in order: the export's layers are unpacked once (``layers``); the sandbox gets a state
dir with its owner record (``state``), an overlay ``upper``/``work`` and limits
(``limits``: cgroup v2, v1, else rlimits). Then one process is spawned, from a thread that
lives as long as this process (``--die-with-parent`` follows the spawning *thread*)::

    unshare --mount --propagation private -- sh -c LAUNCH   # joins the cgroups, sets rlimits,
                                                             # mounts the overlay in its own mount ns
      exec bwrap --die-with-parent --unshare-all ... --bind MERGED / ... python3 -I -S -c BOOTSTRAP TTL

and the shell server of ``assets/shell_server.py`` is streamed to it as under Docker. The overlay
mount exists only in that mount namespace, so it is gone with the sandbox's last process. When
this process dies, even by SIGKILL, stdin closes (the server kills everything and exits), bwrap
gets SIGKILL from the kernel, and the reaper removes the state dir and cgroups. Files travel over
the shell server's channel (``read_file``/``write_file``/``put_files`` ops); the grader's changes
come from the overlay upper dir, read on this host.
"""

from __future__ import annotations

import atexit
import base64
import logging
import os
import queue
import secrets
import select
import shutil
import signal
import subprocess
import tarfile
import threading
import time
import weakref
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Iterable

from terminal_agent.errors import SandboxError, SandboxUnavailableError
from terminal_agent.interfaces import ExecResult, FilesystemChanges, WatchedPaths
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox import shell_protocol
from terminal_agent.sandbox.bwrap.layers import unpacked_layer
from terminal_agent.sandbox.bwrap.limits import AppliedLimits, make_limits, remove_cgroups
from terminal_agent.sandbox.bwrap.settings import bwrap_settings
from terminal_agent.sandbox.bwrap.state import create_sandbox_directory, ensure_reaper, state_root, write_record
from terminal_agent.sandbox.config import SandboxConfig, effective_limits
from terminal_agent.sandbox.images.export import ExportedImages
from terminal_agent.sandbox.overlay_changes import in_layers, walk_upper_dir
from terminal_agent.sandbox.storage_quota import StorageUsage, StorageWatch, directory_disk_bytes, storage_enforcement
from terminal_agent.sandbox.shell_client import STDERR_TAIL, ShellServerClient
from terminal_agent.sandbox.shell_protocol import absolute_path, bootstrap_payload
from terminal_agent.tasks.model import TaskLimits

__all__ = ["BwrapSandbox", "find_bwrap"]

logger = logging.getLogger(__name__)

_LIVE: "weakref.WeakSet[BwrapSandbox]" = weakref.WeakSet()
_READ_CHUNK = 1 << 18
_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP", "SETFCAP",
         "NET_BIND_SERVICE", "NET_RAW", "SYS_CHROOT", "AUDIT_WRITE")
"""Capabilities kept inside the sandbox's user namespace: Docker's default set less MKNOD (no devices
cgroup guards device nodes here); everything else, SYS_ADMIN first, is dropped."""
_READ_ONLY_PROC = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
"""Bound read-only over the sandbox's /proc, as Docker does: sysctls, the SysRq trigger, IRQ and bus knobs."""
_STANDARD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LAUNCH_SCRIPT = (
    'for f in $TA_PROCS; do echo $$ > "$f" || exit 97; done; '
    '[ -z "$TA_ULIMIT_V" ] || ulimit -v "$TA_ULIMIT_V" || exit 98; '
    'mount -t overlay overlay -o "lowerdir=$TA_LOWER,upperdir=$TA_UPPER,workdir=$TA_WORK" "$TA_MERGED" || exit 99; '
    'exec "$@"'
)
"""Runs (as sh) in the new mount namespace: join the cgroups, set the rlimit, mount the overlay, exec bwrap.
Values come in the environment, never in the script text."""


def find_bwrap(configured: str | None = None) -> str:
    """The bwrap executable; :class:`SandboxUnavailableError` saying how to install it when absent."""
    found = configured if configured and os.access(configured, os.X_OK) else shutil.which(configured or "bwrap")
    if not found:
        what = (f"sandbox.bwrap.bwrap_path {configured!r} is no executable bwrap" if configured
                else "bubblewrap (bwrap) is not installed")
        raise SandboxUnavailableError(
            f"{what}: `apt-get install -y bubblewrap` (scripts/setup.sh does it), "
            "or copy the bubblewrap .deb to this node and `dpkg -i` it (docs/bwrap.md)"
        )
    if shutil.which("unshare") is None or os.geteuid() != 0:
        raise SandboxUnavailableError("the bwrap backend needs root and util-linux's `unshare` (it mounts the overlay itself)")
    return found


# --- a thread that outlives every caller (PR_SET_PDEATHSIG fires when the spawning thread ends) ----------
_SPAWN_QUEUE: "queue.Queue[tuple[Callable[[], subprocess.Popen[bytes]], Future[subprocess.Popen[bytes]]]]" = queue.Queue()
_SPAWNER: list[threading.Thread] = []
_SPAWNER_LOCK = threading.Lock()


def _spawner_loop() -> None:
    while True:
        work, future = _SPAWN_QUEUE.get()
        try:
            future.set_result(work())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            future.set_exception(exc)


def _spawn(work: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    with _SPAWNER_LOCK:
        if not _SPAWNER:
            thread = threading.Thread(target=_spawner_loop, name="ta-bwrap-spawner", daemon=True)
            thread.start()
            _SPAWNER.append(thread)
    future: Future[subprocess.Popen[bytes]] = Future()
    _SPAWN_QUEUE.put((work, future))
    return future.result()


def overlay_lower_dirs(layers_bottom_first: Iterable[Path]) -> list[str]:
    """The overlay's ``lowerdir`` list (topmost first) for layers given bottom first.

    An image can hold the same layer twice (two build steps with identical results share a diff
    id, hence one unpacked dir). Overlayfs refuses a lowerdir list that names a dir twice
    ("conflicting lowerdir path", ELOOP, seen on kernel 6.18), so only the topmost occurrence is
    kept; the lower one is shadowed by it everywhere, so the merged tree is the same.
    """
    top_first: list[str] = []
    for layer in reversed(list(layers_bottom_first)):
        path = str(layer)
        if path not in top_first:
            top_first.append(path)
    return top_first


class BwrapSandbox(ShellServerClient):
    """A running bwrap sandbox with a persistent shell. See :class:`terminal_agent.interfaces.Sandbox`."""

    _kind = "bwrap sandbox"

    def __init__(self, sandbox_id: str, directory: Path, lowers: list[str], *, image: str, limits: TaskLimits,
                 config: SandboxConfig, run_id: str, applied: AppliedLimits) -> None:
        self._init_client(sandbox_id)
        self._dir = directory
        self._lowers = lowers
        self.image = image
        self.limits = limits
        self.config = config
        self.run_id = run_id
        self.applied_limits = applied
        self._proc: subprocess.Popen[bytes] | None = None
        self.server_info: dict[str, Any] = {}
        self.created_at = time.monotonic()
        self._storage_watch: StorageWatch | None = None
        _LIVE.add(self)

    # --- lifecycle ------------------------------------------------------------------------------
    @classmethod
    def start(cls, image: str, limits: TaskLimits | None = None, config: SandboxConfig | None = None,
              run_id: str | None = None, *, env: dict[str, str] | None = None,
              verifier_network: bool | None = None) -> "BwrapSandbox":
        """Start a sandbox of the exported image ``image`` and wait for its shell server.

        ``env`` (resolved, see ``task_env``) is set over the image's environment. The network
        namespace is the host's when ``limits.network``, else a new one with only ``lo``; it is fixed
        for the sandbox's life (:meth:`set_network`), so a ``verifier_network`` that differs is refused
        when the verifier phase asks for it (logged as a warning now).

        Raises :class:`SandboxUnavailableError` (bwrap missing, image not exported, no python3 in it)
        or ``ImageNotAvailableError`` (no export, with how to make one).
        """
        config = config or SandboxConfig()
        limits = effective_limits(limits or TaskLimits(), config)
        run_id = run_id or f"pid{os.getpid()}"
        if verifier_network is not None and bool(verifier_network) != bool(limits.network):
            logger.warning("bwrap sandbox of %s: its verifier phase will ask for %s network than its agent phase, "
                           "which bwrap cannot give (the verifier will fail as an infrastructure error)",
                           image, "a" if verifier_network else "no")
        # no kernel quota for a directory on the host's filesystem: measured, refused (before anything) or ignored
        enforcement = storage_enforcement(limits.storage_mb, config.storage, kernel=False, backend="bwrap",
                                          why_no_kernel="its upper directory is a plain directory of the host")
        bwrap = find_bwrap(bwrap_settings(config).bwrap_path)
        exported = ExportedImages.open(bwrap_settings(config).images_dir).image(image)
        root = state_root(bwrap_settings(config).state_dir)
        lowers = overlay_lower_dirs(unpacked_layer(a, root / "layers") for a in [exported.base_archive, *exported.layer_archives])
        sandbox_id = f"bw-{secrets.token_hex(6)}"
        ensure_reaper(root)
        record: dict[str, Any] = {"labels": sandbox_labels.owner_labels(run_id, config.ttl_s, image), "cgroups": []}
        directory = create_sandbox_directory(root, sandbox_id, record)
        sandbox: BwrapSandbox | None = None
        applied: AppliedLimits | None = None
        try:
            applied = make_limits(sandbox_id, limits, bwrap_settings(config).limits)
            record["cgroups"] = applied.cgroup_dirs
            record["limits"] = applied.enforced
            write_record(directory, record)
            sandbox = cls(sandbox_id, directory, lowers, image=image, limits=limits, config=config,
                          run_id=run_id, applied=applied)
            if enforcement == "measured" and limits.storage_mb is not None:
                upper = str(directory / "upper")
                sandbox._storage_watch = StorageWatch(limits.storage_mb, lambda: (directory_disk_bytes(upper), "upperdir"),
                                                      config.storage_measure_share)
            image_env = [*exported.env, *(f"{key}={value}" for key, value in (env or {}).items())]
            argv, launch_env = sandbox._command(bwrap, image_env, exported.workdir, applied)
            sandbox._proc = _spawn(lambda: subprocess.Popen(
                argv, env=launch_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, close_fds=True, bufsize=0,
            ))
            record["pid"] = sandbox._proc.pid
            record["pid_start"] = sandbox_labels.process_start_ticks(sandbox._proc.pid)
            write_record(directory, record)
            threading.Thread(target=sandbox._drain_stderr, name=f"ta-{sandbox_id}-stderr", daemon=True).start()
            sandbox._send(bootstrap_payload())
            ready = sandbox._await("ready", time.monotonic() + config.start_timeout_s, starting=True)
            sandbox.server_info = dict(ready.header, limits=applied.enforced, limits_mechanism=applied.mechanism)
            if ready.header.get("problems"):
                raise SandboxUnavailableError(
                    f"image {image!r} cannot host the sandbox shell: {'; '.join(ready.header['problems'])}")
            return sandbox
        except BaseException as exc:
            if sandbox is not None:
                sandbox.close()
            else:
                remove_cgroups(applied.cgroup_dirs if applied else [])
                shutil.rmtree(directory, ignore_errors=True)
            if isinstance(exc, OSError):
                raise SandboxUnavailableError(f"cannot start a bwrap sandbox of {image!r}: {exc}") from exc
            raise

    def _command(self, bwrap: str, image_env: list[str], workdir: str, applied: AppliedLimits) -> tuple[list[str], dict[str, str]]:
        # --unshare-user, not --unshare-all's "try": without a user namespace root's capabilities would be the host's
        args = [bwrap, "--die-with-parent", "--unshare-all", "--unshare-user", "--new-session", "--hostname", "ta-sandbox"]
        if self.limits.network:
            args.append("--share-net")
        args += ["--bind", str(self._dir / "merged"), "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/sys"]
        for kernel_knob in _READ_ONLY_PROC:  # uid 0 inside maps to the host's root: host-wide knobs stay read-only
            args += ["--ro-bind-try", kernel_knob, kernel_knob]
        for host_dir, inside in applied.inside_binds.items():
            args += ["--ro-bind", host_dir, inside]
        args += ["--chdir", workdir or "/", "--clearenv"]
        for entry in image_env:
            key, _, value = entry.partition("=")
            if key:
                args += ["--setenv", key, value]
        args += ["--cap-drop", "ALL"]
        for cap in _CAPS:
            args += ["--cap-add", f"CAP_{cap}"]
        args += ["--", *shell_protocol.server_command(self.config.ttl_s)]
        env = {
            "PATH": os.environ.get("PATH", _STANDARD_PATH),
            "TA_PROCS": " ".join(os.path.join(group, "cgroup.procs") for group in applied.cgroup_dirs),
            "TA_ULIMIT_V": str(applied.address_space_kb or ""),
            "TA_LOWER": ":".join(self._lowers),
            "TA_UPPER": str(self._dir / "upper"),
            "TA_WORK": str(self._dir / "work"),
            "TA_MERGED": str(self._dir / "merged"),
        }
        launcher = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", LAUNCH_SCRIPT, "ta-bwrap-launch"]
        return launcher + args, env

    @property
    def id(self) -> str:
        return self._id

    def check_storage(self) -> StorageUsage | None:
        """See :class:`~terminal_agent.sandbox.storage_quota.StorageWatchedSandbox`: the overlay's upper directory
        (on this host) against a measured quota; None when there is none."""
        if self._storage_watch is None:
            return None
        self._check_usable()
        return self._storage_watch.check()

    def close(self) -> None:
        """Close the shell's stdin (the server kills everything and exits), kill the process group,
        remove the cgroups and the state dir. Idempotent; never raises."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        proc = self._proc
        try:
            if proc is not None:
                for stream in (proc.stdin, proc.stdout):
                    try:
                        if stream is not None:
                            stream.close()
                    except OSError:
                        pass
                try:
                    proc.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    pass
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    proc.kill()
                    proc.wait(timeout=5.0)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            remove_cgroups(self.applied_limits.cgroup_dirs)
            # On a loaded machine the last processes may still hold the overlay for a moment: retry briefly.
            deadline = time.monotonic() + 5.0
            while True:
                shutil.rmtree(self._dir, ignore_errors=True)
                if not os.path.exists(self._dir) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        except Exception:  # noqa: BLE001 - close never raises
            logger.debug("closing %s failed", self._id, exc_info=True)
        _LIVE.discard(self)

    def __repr__(self) -> str:
        return f"BwrapSandbox({self._id}, image={self.image!r})"

    # --- files (over the shell channel) ---------------------------------------------------------------
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"write_file takes bytes, not {type(data).__name__}")
        path = absolute_path(path)
        if path == "/":
            raise IsADirectoryError(21, "Is a directory", path)
        payload = base64.b64encode(bytes(data)).decode("ascii")
        self._call({"op": "write_file", "path": path, "data": payload, "mode": mode}, 60.0 + len(data) / 5e6)

    def read_file(self, path: str) -> bytes:
        reply = self._call({"op": "read_file", "path": absolute_path(path)}, 60.0)
        return reply.parts[0] if reply.parts else b""

    def upload_dir(self, local_dir: Path | str, remote_dir: str) -> None:
        local = Path(local_dir)
        if not local.is_dir():
            raise NotADirectoryError(str(local))
        remote_dir = absolute_path(remote_dir)
        self._call({"op": "mkdirs", "path": remote_dir}, 30.0)
        entries: list[dict[str, str | int]] = []  # put_files entries: name, type, mode, link or data
        for path in sorted(local.rglob("*")):
            rel = path.relative_to(local).as_posix()
            if path.is_symlink():
                entries.append({"name": rel, "type": "l", "link": os.readlink(path)})
            elif path.is_dir():
                entries.append({"name": rel, "type": "d", "mode": path.stat().st_mode & 0o7777})
            else:
                entries.append({"name": rel, "type": "f", "mode": path.stat().st_mode & 0o7777,
                                "data": base64.b64encode(path.read_bytes()).decode("ascii")})
        self._call({"op": "put_files", "dest": remote_dir, "entries": entries}, 120.0)

    # --- for the grader ------------------------------------------------------------------------------
    @property
    def network_enabled(self) -> bool:
        """Whether the sandbox shares the host's network (fixed at start: ``limits.network``)."""
        return bool(self.limits.network)

    def set_network(self, enabled: bool) -> None:
        """A no-op when ``enabled`` is the current state; otherwise a :class:`SandboxError`: bwrap puts the
        sandbox in its network namespace when it starts (``--share-net`` or a new one), and a running
        process cannot be moved to another. A task whose verifier needs another network than its agent
        needs the Docker (or Ray) backend."""
        self._check_usable()
        if bool(enabled) != self.network_enabled:
            raise SandboxError(
                f"sandbox {self._id}: cannot change the network of a running bwrap sandbox (it was started "
                f"{'with' if self.network_enabled else 'without'} one; the phase now asks for "
                f"{'one' if enabled else 'none'}); use the docker or ray backend for such a task"
            )

    def list_changes(self, watched: WatchedPaths, *, prefer_host_read: bool = True) -> FilesystemChanges:
        """From the overlay upper dir on this host (the only listing this backend has)."""
        self._check_usable()
        return FilesystemChanges(walk_upper_dir(str(self._dir / "upper"), self._lowers, watched), "upperdir")

    def image_has(self, paths: list[str]) -> dict[str, bool]:
        self._check_usable()
        return {path: in_layers(self._lowers, path) for path in paths}

    def put_archive(self, dest_dir: str, tar: bytes) -> None:
        import io

        entries = []
        with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
            for member in archive:
                entry: dict[str, Any] = {"name": member.name, "mode": member.mode, "uid": member.uid, "gid": member.gid}
                if member.isdir():
                    entry["type"] = "d"
                elif member.issym():
                    entry.update(type="l", link=member.linkname)
                elif member.isfile():
                    handle = archive.extractfile(member)
                    entry.update(type="f", data=base64.b64encode(handle.read() if handle else b"").decode("ascii"))
                else:
                    raise OSError(22, f"unsupported tar member type in {member.name}", member.name)
                entries.append(entry)
        self._call({"op": "put_files", "dest": absolute_path(dest_dir), "entries": entries}, 120.0)

    def run_privileged(self, argv: list[str], timeout: float) -> ExecResult:
        """Through the shell server (root in the sandbox), not the agent's shell: a fresh process, clean env."""
        started = time.monotonic()
        request = {"op": "run_argv", "argv": list(argv), "timeout": float(timeout),
                   "env": {"LC_ALL": "C.UTF-8", "PATH": _STANDARD_PATH}}
        reply = self._call(request, timeout + self.config.reply_grace_s)
        header = reply.header
        output = (reply.parts[0] if reply.parts else b"").decode("utf-8", errors="replace")
        return ExecResult(exit_code=int(header.get("exit_code", -1)), output=output,
                          duration_s=time.monotonic() - started, timed_out=bool(header.get("timed_out")))

    # --- transport: bwrap's stdin and stdout (stderr drained by a thread) -------------------------------
    def _send(self, data: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        view = memoryview(data)
        while view:  # an unbuffered pipe write may be partial
            view = view[self._proc.stdin.write(view) or 0:]

    def _receive(self, timeout: float, starting: bool) -> bytes | None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
            return os.read(fd, _READ_CHUNK) if ready else None
        except (OSError, ValueError) as exc:
            raise self._broken_error(f"lost the shell's stdout: {exc}", starting) from exc

    def _settle_before_report(self) -> None:
        time.sleep(0.05)  # let the stderr drain catch bwrap's last words

    def _broken_detail(self, reason: str, stderr: str) -> str:
        detail = reason + (f"; stderr: {stderr[-600:]}" if stderr else "")
        if self._proc is not None and self._proc.poll() is not None:
            detail += f" (exit status {self._proc.returncode})"
        return detail

    def _drain_stderr(self) -> None:
        proc = self._proc
        if proc is None or proc.stderr is None:
            return
        try:
            while True:
                chunk = os.read(proc.stderr.fileno(), 65536)
                if not chunk:
                    return
                self._stderr_tail = (self._stderr_tail + chunk)[-STDERR_TAIL:]
        except (OSError, ValueError):
            return


@atexit.register
def close_live_sandboxes() -> None:
    """Close every live sandbox of this process: the backend's ``close`` hook, and the backstop of a normal
    interpreter exit (SIGKILL runs none of this: the dead-man switch and the reaper cover it)."""
    for sandbox in list(_LIVE):
        sandbox.close()
