"""The self-check every sandbox backend must pass: exec, files, timeouts, limits, cleanup.

Run here against ``docker`` and ``bwrap``. Reuse it for a new backend by subclassing :class:`SandboxSelfCheck` and providing a class-scoped
``make_sandbox`` fixture: ``make_sandbox(limits=None, config=None, env=None) -> Sandbox`` (started, ``env``
the task's env), plus ``sandbox_exists(sandbox) -> bool`` telling whether the backend still holds resources
for it, and ``host_address(sandbox)``: the address at which the sandbox reaches this host when it has a network.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from terminal_agent.errors import SandboxError
from terminal_agent.interfaces import ExecResult, Sandbox
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import TaskLimits

CAP = 16384


class SandboxSelfCheck:
    """Backend-independent checks; subclasses supply ``make_sandbox`` and ``sandbox_exists``."""

    def sandbox_exists(self, sandbox: Sandbox) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def host_address(self, sandbox: Sandbox) -> str:
        """Where a sandbox with a network reaches this host (Docker: its network's gateway)."""
        return default_gateway(sandbox)

    @pytest.fixture(scope="class")
    def sandbox(self, make_sandbox):
        sandbox = make_sandbox(limits=TaskLimits(memory_mb=300, pids=80, cpus=0.5), config=SandboxConfig(output_cap_bytes=CAP))
        yield sandbox
        sandbox.close()

    # --- exec ---------------------------------------------------------------------------------
    def test_is_a_sandbox(self, sandbox):
        assert isinstance(sandbox, Sandbox)
        assert sandbox.is_alive()

    def test_exec_returns_output_exit_code_and_duration(self, sandbox):
        result = sandbox.exec("echo hello; echo oops >&2; exit 3", timeout=10)
        assert isinstance(result, ExecResult)
        assert result.exit_code == 3 and not result.ok
        assert result.output == "hello\noops\n"
        assert not result.timed_out and not result.truncated
        assert 0 < result.duration_s < 5

    def test_stderr_kept_apart_on_request(self, sandbox):
        result = sandbox.exec("echo out; echo err >&2", timeout=10, merge_stderr=False)
        assert (result.output, result.stderr, result.exit_code) == ("out\n", "err\n", 0)

    def test_cwd_and_exported_env_persist(self, sandbox):
        assert sandbox.exec("mkdir -p /tmp/persist && cd /tmp/persist && export SELF_CHECK='a b\"$c'", 10).ok
        assert sandbox.exec('pwd; printf "%s\\n" "$SELF_CHECK"', 10).output == "/tmp/persist\na b\"$c\n"
        assert sandbox.exec("unset SELF_CHECK; cd /", 10).ok
        assert sandbox.exec('pwd; echo "[${SELF_CHECK-unset}]"', 10).output == "/\n[unset]\n"

    def test_stateless_and_overrides_leave_state_alone(self, sandbox):
        assert sandbox.exec("cd /usr", 10).ok
        assert sandbox.exec("pwd", 10, stateless=True).output.strip() == "/"
        assert sandbox.exec("cd /etc; pwd", 10, stateless=True).output.strip() == "/etc"
        assert sandbox.exec("pwd; echo $ONLY_ONCE", 10, workdir="/var", env={"ONLY_ONCE": "yes"}).output == "/var\nyes\n"
        assert sandbox.exec('pwd; echo "[$ONLY_ONCE]"', 10).output == "/usr\n[]\n"
        assert sandbox.exec("cd /", 10).ok

    def test_non_utf8_and_binary_output_decode_with_replacement(self, sandbox):
        result = sandbox.exec("printf 'ok\\xff\\xfe\\x00end'; head -c 4096 /dev/urandom >/dev/null", 10)
        assert result.exit_code == 0
        assert result.output.startswith("ok") and result.output.endswith("end") and "\ufffd" in result.output

    def test_output_is_capped_head_and_tail_kept(self, sandbox):
        result = sandbox.exec("echo START; head -c 200000 /dev/zero | tr '\\0' x; echo; echo END", 20)
        assert result.truncated
        total = len("START\n") + 200000 + 1 + len("END\n")
        assert result.bytes_cut == total - CAP
        assert result.output.startswith("START\nxxx") and result.output.endswith("xxx\nEND\n")
        assert f"{result.bytes_cut} bytes cut" in result.output

    # --- deadlines ------------------------------------------------------------------------------
    def test_deadline_kills_the_command_and_shell_survives(self, sandbox):
        started = time.monotonic()
        result = sandbox.exec("echo before; sleep 30; echo after", timeout=1)
        elapsed = time.monotonic() - started
        assert result.timed_out and result.exit_code == 124
        assert result.output == "before\n"
        assert elapsed <= 2.0
        assert sandbox.exec("pgrep -f '[s]leep 30' || echo none", 10).output.strip() == "none"
        assert sandbox.exec("echo alive", 10).output == "alive\n"

    def test_background_command_runs_until_processes_are_killed(self, sandbox):
        result = sandbox.exec("sleep 301", block=False)
        assert result.exit_code == 0
        deadline = time.monotonic() + 5
        while sandbox.exec("pgrep -f '[s]leep 301' >/dev/null", 10).exit_code != 0:
            assert time.monotonic() < deadline, "background command never started"
            time.sleep(0.05)
        assert sandbox.kill_agent_processes() >= 1
        assert sandbox.exec("pgrep -f '[s]leep 301' || echo none", 10).output.strip() == "none"

    def test_timeout_bounded_by_configured_maximum(self, make_sandbox):
        sandbox = make_sandbox(config=SandboxConfig(max_command_timeout_s=1.0))
        try:
            started = time.monotonic()
            result = sandbox.exec("sleep 20", timeout=3600)
            assert result.timed_out and time.monotonic() - started < 2.5
            assert sandbox.exec("sleep 20", timeout=float("inf")).timed_out
            with pytest.raises(ValueError):
                sandbox.exec("sleep 20", timeout=float("nan"))
            assert sandbox.exec("pgrep -f '[s]leep 20' || echo none", 10).output.strip() == "none"
        finally:
            sandbox.close()

    # --- files ----------------------------------------------------------------------------------
    def test_write_and_read_binary_file_of_any_size(self, sandbox):
        data = bytes(range(256)) * 16 + os.urandom(3 * 1024 * 1024)
        sandbox.write_file("/tmp/new/dir/blob.bin", data, mode=0o755)
        assert sandbox.read_file("/tmp/new/dir/blob.bin") == data
        assert sandbox.exec("stat -c %a /tmp/new/dir/blob.bin", 10).output.strip() == "755"
        assert sandbox.exec("stat -c %s /tmp/new/dir/blob.bin", 10).output.strip() == str(len(data))
        sandbox.write_file("/tmp/new/dir/blob.bin", b"")
        assert sandbox.read_file("/tmp/new/dir/blob.bin") == b""

    def test_paths_are_never_shell_strings(self, sandbox):
        path = "/tmp/odd name 'q' $(touch /tmp/pwned) `id`.txt"
        sandbox.write_file(path, b"$(touch /tmp/pwned2)\n")
        assert sandbox.read_file(path) == b"$(touch /tmp/pwned2)\n"
        assert sandbox.exec("ls /tmp/pwned /tmp/pwned2 2>/dev/null | wc -l", 10).output.strip() == "0"

    def test_bad_write_targets_raise_os_errors_and_leave_the_tree_alone(self, sandbox):
        assert sandbox.exec("mkdir -p /tmp/keep && touch /tmp/keep/inside /tmp/plainfile", 10).ok
        with pytest.raises(IsADirectoryError):
            sandbox.write_file("/tmp/keep", b"would replace the directory")
        with pytest.raises(NotADirectoryError):
            sandbox.write_file("/tmp/plainfile/child", b"x")
        assert sandbox.exec("ls /tmp/keep", 10).output == "inside\n"
        assert sandbox.is_alive()

    def test_missing_file_and_directory_errors(self, sandbox):
        with pytest.raises(FileNotFoundError):
            sandbox.read_file("/definitely/not/here")
        with pytest.raises(IsADirectoryError):
            sandbox.read_file("/etc")

    def test_read_follows_symlinks(self, sandbox):
        sandbox.write_file("/tmp/link-target.txt", b"target")
        assert sandbox.exec("ln -sf /tmp/link-target.txt /tmp/abs-link && cd /tmp && ln -sf link-target.txt rel-link", 10).ok
        assert sandbox.read_file("/tmp/abs-link") == b"target"
        assert sandbox.read_file("/tmp/rel-link") == b"target"
        assert sandbox.exec("cd /", 10).ok

    def test_symlink_loop_is_an_os_error_not_a_broken_sandbox(self, sandbox):
        assert sandbox.exec("ln -sfn /tmp/loop-b /tmp/loop-a && ln -sfn /tmp/loop-a /tmp/loop-b", 10).ok
        with pytest.raises(OSError) as caught:
            sandbox.read_file("/tmp/loop-a")
        assert not isinstance(caught.value, SandboxError)
        assert sandbox.is_alive()

    def test_reading_a_fifo_is_an_os_error_and_does_not_hang(self, sandbox):
        assert sandbox.exec("rm -f /tmp/fifo && mkfifo /tmp/fifo", 10).ok
        started = time.monotonic()
        with pytest.raises(OSError) as caught:
            sandbox.read_file("/tmp/fifo")
        assert not isinstance(caught.value, SandboxError)
        assert time.monotonic() - started < 5 and sandbox.is_alive()

    def test_upload_dir(self, sandbox, tmp_path: Path):
        (tmp_path / "pkg" / "sub").mkdir(parents=True)
        (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
        (tmp_path / "pkg" / "sub" / "b.txt").write_bytes(b"\x00\x01")
        (tmp_path / "top.txt").write_text("top")
        sandbox.upload_dir(tmp_path, "/opt/uploaded/here")
        listing = sandbox.exec("cd /opt/uploaded/here && find . -type f | sort", 10).output.split()
        assert listing == ["./pkg/a.py", "./pkg/sub/b.txt", "./top.txt"]
        assert sandbox.read_file("/opt/uploaded/here/pkg/sub/b.txt") == b"\x00\x01"

    # --- limits ---------------------------------------------------------------------------------
    def test_limits_are_applied(self, sandbox):
        script = (  # the sandbox's own cgroup as it sees it (v1 or v2), and its network devices
            "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; "
            "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; "
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
        )
        lines = sandbox.exec(script, 10).output.split()
        assert int(lines[0]) == 300 * 1024 * 1024
        assert int(lines[1]) == 80
        assert lines[2:] == ["lo"], "no network unless the task asks for one"

    # --- task env and network -----------------------------------------------------------------------
    def test_task_env_is_the_persistent_shells_environment(self, make_sandbox):
        env = {"TA_TASK_MODE": "fast and 'quoted'", "TA_TASK_EMPTY": "", "PATH": "/opt/task-bin:/usr/bin:/bin"}
        sandbox = make_sandbox(env=env)
        try:
            script = 'printf "%s|%s|%s\\n" "$TA_TASK_MODE" "${TA_TASK_EMPTY-unset}" "$PATH"'
            expected = "fast and 'quoted'||/opt/task-bin:/usr/bin:/bin\n"
            assert sandbox.exec(script, 10).output == expected
            assert sandbox.exec("export TA_TASK_MODE=changed", 10).ok
            sandbox.reset_shell_state()  # back to the sandbox's own environment, the task's env included
            assert sandbox.exec(script, 10).output == expected
            assert sandbox.exec(script, 10, stateless=True).output == expected
        finally:
            sandbox.close()

    def test_no_network_means_loopback_only_and_no_way_to_the_host(self, sandbox):
        assert not sandbox.network_enabled
        with HostListener() as listener:
            probe = connect_probe(["127.0.0.1", "172.17.0.1", *host_ipv4_addresses()], listener.port)
            lines = sandbox.exec(probe + "; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", 20).output.split()
        assert lines[-1] == "lo" and not any(line.startswith("connected") for line in lines), lines
        assert listener.accepted == 0
        sandbox.set_network(False)  # the current state: a no-op on every backend
        assert not sandbox.network_enabled and sandbox.exec("echo still", 10).output == "still\n"

    def test_a_network_when_the_task_allows_it(self, make_sandbox):
        sandbox = make_sandbox(limits=TaskLimits(network=True))
        try:
            assert sandbox.network_enabled
            with HostListener() as listener:
                result = sandbox.exec(connect_probe([self.host_address(sandbox)], listener.port), 20)
            assert result.output.startswith("connected " + listener.token), result.output
            sandbox.set_network(True)
            assert sandbox.network_enabled
        finally:
            sandbox.close()

    def test_memory_hog_is_killed_and_reported(self, sandbox):
        result = sandbox.exec("python3 -c 'b = bytearray(1 << 30)'", 30)
        assert result.exit_code == 137
        assert result.oom_killed
        assert sandbox.exec("echo fine", 10).output == "fine\n"

    # --- lifecycle / cleanup --------------------------------------------------------------------
    def test_close_is_idempotent_and_releases_everything(self, make_sandbox):
        sandbox = make_sandbox()
        assert sandbox.exec("true", 10).ok
        assert self.sandbox_exists(sandbox)
        sandbox.close()
        sandbox.close()
        assert not sandbox.is_alive()
        with pytest.raises(SandboxError):
            sandbox.exec("true", 10)
        deadline = time.monotonic() + 10
        while self.sandbox_exists(sandbox):
            assert time.monotonic() < deadline, "backend still holds the sandbox 10 s after close()"
            time.sleep(0.1)


def default_gateway(sandbox: Sandbox) -> str:
    """The sandbox's default gateway (from /proc/net/route), where Docker's bridge reaches the host."""
    script = "awk '$2 == \"00000000\" {print $3; exit}' /proc/net/route"
    hexed = sandbox.exec(script, 10).output.strip()
    assert hexed, "the sandbox has no default route"
    return socket.inet_ntoa(int(hexed, 16).to_bytes(4, "little"))


def host_ipv4_addresses() -> list[str]:
    """This host's own IPv4 addresses (of its interfaces), read from /proc."""
    found = []
    with open("/proc/net/fib_trie") as handle:
        lines = handle.read().splitlines()
    for previous, line in zip(lines, lines[1:]):
        if "/32 host LOCAL" in line:
            address = previous.split()[-1]
            if address not in found and not address.startswith("127."):
                found.append(address)
    return found


def connect_probe(addresses: list[str], port: int) -> str:
    """A command that tries to connect to each address at ``port`` and prints ``connected <reply>`` or why not."""
    code = (
        "import socket,sys\n"
        "for a in sys.argv[2:]:\n"
        " try:\n"
        "  s=socket.create_connection((a,int(sys.argv[1])),timeout=3);print('connected',s.recv(64).decode(),a)\n"
        " except OSError as e:print('failed',a,type(e).__name__)\n"
    )
    quoted = code.replace("'", "'\"'\"'")
    return f"python3 -c '{quoted}' {port} {' '.join(addresses)}"


class HostListener:
    """A TCP listener on every address of this host that greets each connection with a token."""

    def __init__(self) -> None:
        self.token = f"ta-{os.getpid()}-{time.monotonic_ns()}"
        self.accepted = 0
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("0.0.0.0", 0))
        self._server.listen(16)
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed at the end of the test
            self.accepted += 1
            with conn:
                conn.sendall(self.token.encode())

    def __enter__(self) -> "HostListener":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.close()


@pytest.mark.docker
class TestDockerSandboxSelfCheck(SandboxSelfCheck):
    """The Docker backend against the real daemon."""

    @pytest.fixture(scope="class")
    def make_sandbox(self, base_image):
        from terminal_agent.sandbox.docker.sandbox import DockerSandbox

        def make(limits: TaskLimits | None = None, config: SandboxConfig | None = None, env=None):
            return DockerSandbox.start(base_image, limits=limits, config=config, run_id="test-self-check", env=env)

        return make

    def sandbox_exists(self, sandbox) -> bool:
        from terminal_agent.sandbox.docker.sandbox import docker_client

        return bool(docker_client().api.containers(all=True, filters={"id": sandbox.id}))

    def test_context_manager_closes(self, make_sandbox):
        with make_sandbox() as sandbox:
            assert sandbox.exec("echo in", 10).output == "in\n"
        assert not sandbox.is_alive()


@pytest.mark.docker  # the images are exported from the local daemon, then run without it
class TestBwrapSandboxSelfCheck(SandboxSelfCheck):
    """The bwrap backend on an export of the base image."""

    @pytest.fixture(scope="class")
    def make_sandbox(self, base_image):
        from bwrap_support import bwrap_config

        from terminal_agent.sandbox.backends import start_sandbox

        defaults = bwrap_config()

        def make(limits: TaskLimits | None = None, config: SandboxConfig | None = None, env=None):
            merged = (config or SandboxConfig()).model_copy(update={"backend": "bwrap", "bwrap": defaults.bwrap})
            return start_sandbox(merged, base_image, limits or TaskLimits(), run_id="test-self-check", env=env)

        return make

    def sandbox_exists(self, sandbox) -> bool:
        return sandbox._dir.exists() or any(os.path.isdir(g) for g in sandbox.applied_limits.cgroup_dirs)

    def host_address(self, sandbox) -> str:
        return "127.0.0.1"  # a sandbox with a network shares the host's network namespace

    def test_changing_the_network_of_a_running_sandbox_is_refused(self, sandbox):
        with pytest.raises(SandboxError, match="cannot change the network of a running bwrap sandbox"):
            sandbox.set_network(True)
        assert not sandbox.network_enabled and sandbox.exec("echo usable", 10).output == "usable\n"

    def test_limits_mechanism_is_recorded(self, sandbox):
        assert sandbox.server_info["limits_mechanism"] in ("cgroup-v2", "cgroup-v1", "rlimit")
        assert set(sandbox.server_info["limits"]) == {"memory", "pids", "cpu"}
