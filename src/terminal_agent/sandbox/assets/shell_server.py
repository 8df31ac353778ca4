"""In-container shell server of terminal-agent (runs as the container's main process under init).

Standard library only; ASCII source; ONE file, because the owner streams it over the container's
attached stdin (see ``terminal_agent.sandbox.shell_protocol``), so nothing of it is written to the
container's disk.

Protocol:
  requests  (stdin)  one ASCII JSON object per line: {"id": ..., "op": ..., ...}
  replies   (stdout) b"TA1 " + 8 hex digits header length + 8 hex digits body length + b"\\n"
                     + header JSON + body; the header lists the lengths of the body parts.
Stdin EOF means the owner is gone: every process is killed and the server exits (dead-man
switch); so does a TTL timer. Each command runs in a subshell forked by a job-control "zygote"
bash (its own process group), or in a fresh ``bash -c`` of its own session when it overrides the
directory or environment, with ``TA_CMD_TAG=<tag>`` exported; at its deadline the process group
is killed and every process still carrying the tag is swept.

Map (top-down):
  1. constants and process-wide state
  2. main loop and request dispatch       main, handle_request
  3. wire                                 stdin_reader, send_reply
  4. the persistent shell                 Shell (run one command, keep cwd and exported env)
  5. starting bash                        Zygote (fork per command), start_fresh_bash, spawn_bash
  6. output                               Capture (head + tail), Drainer (pipes left by children)
  7. the exported environment             parse_export_p (bash's ``export -p``)
  8. processes                            listing, killing by group and tag, kill_all, stop_all, OOM counter
  9. staying out of the agent's reach     stay_out_of_reach (re-exec as ``ta-sandbox``, signals)
"""

import binascii
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

# =================================================================================================
# 1. Constants and process-wide state
# =================================================================================================

MAGIC = b"TA1 "
TAG_VAR = b"TA_CMD_TAG"
READ_CHUNK = 65536
OOM_CONTROL = "/sys/fs/cgroup/memory/memory.oom_control"
OOM_EVENTS = "/sys/fs/cgroup/memory.events"  # cgroup v2 (the bwrap backend binds the sandbox's cgroup there)
RUN_CAP = 1 << 20  # bytes kept of a run_argv's output

SELF_PID = os.getpid()
WRITE_LOCK = threading.Lock()
REQUESTS = []
REQUESTS_COND = threading.Condition()
BACKGROUND = []  # Popen objects of block=False commands, reaped by exec, ping and kill_all
DRAINER = []  # the one Drainer, started on first use
OOM_FD = []  # the memory cgroup's oom_control, opened on first use


# =================================================================================================
# 2. Main loop and request dispatch
# =================================================================================================

def main():
    """Start (TTL timer, stdin reader), report ready, then serve requests one at a time."""
    stay_out_of_reach()
    ttl = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    if ttl > 0:
        timer = threading.Timer(ttl, kill_everything_and_exit, args=(3,))
        timer.daemon = True
        timer.start()
    problems = []
    if not (hasattr(os, "pidfd_open") and hasattr(os, "memfd_create")):
        problems.append("python3 is %s; the shell server needs 3.9 or newer" % sys.version.split()[0])
    if not os.access("/bin/bash", os.X_OK):
        problems.append("/bin/bash is missing")
    threading.Thread(target=stdin_reader, daemon=True).start()
    if problems:
        send_reply({"id": "ready", "ok": True, "problems": problems})
        while True:  # the owner gives up and closes stdin, which ends this process
            time.sleep(3600)
    shell = Shell()
    send_reply({"id": "ready", "ok": True, "pid": SELF_PID, "cwd": shell.cwd,
                "python": sys.version.split()[0], "uid": os.getuid(), "problems": []})
    shell.prepare_zygote()
    while True:
        with REQUESTS_COND:
            while not REQUESTS:
                REQUESTS_COND.wait()
            request = REQUESTS.pop(0)
        try:
            handle_request(shell, request)
        except Exception as exc:  # the server must outlive any one request
            send_reply({"id": request.get("id"), "ok": False, "error": "%s: %s" % (type(exc).__name__, exc)})


def handle_request(shell, request):
    """Carry out one request and send its reply (an exception is answered by ``main``)."""
    op = request.get("op")
    if op == "exec":
        header, parts = shell.run(request)
        header["id"] = request["id"]
        send_reply(header, parts)
        if not REQUESTS:
            shell.prepare_zygote()
    elif op == "ping":
        shell.reap_background()
        send_reply({"id": request["id"], "ok": True})
    elif op == "kill_all":
        shell.drop_zygote()
        count = kill_all()
        send_reply({"id": request["id"], "ok": True, "killed": count})
    elif op == "stop_all":
        shell.drop_zygote()  # the idle shell, as before kill_all: what the agent left running is what stays
        stopped, already, running = stop_all()
        send_reply({"id": request["id"], "ok": True, "stopped": stopped, "already_stopped": already,
                    "running": running})
    elif op in ("mkdirs", "prepare_write"):
        try:
            path = request["path"]
            if op == "prepare_write" and os.path.isdir(path):  # an archive would replace it
                raise IsADirectoryError(21, "Is a directory", path)
            try:
                os.makedirs(path if op == "mkdirs" else (os.path.dirname(path) or "/"), exist_ok=True)
            except FileExistsError:  # a component of the path is a file
                raise NotADirectoryError(20, "Not a directory", path) from None
        except OSError as exc:  # the caller's path is wrong, the sandbox is fine
            send_reply({"id": request["id"], "ok": False, "errno": exc.errno,
                        "error": exc.strerror or str(exc)})
        else:
            send_reply({"id": request["id"], "ok": True})
    elif op in FILE_OPS:
        try:
            header, parts = FILE_OPS[op](request)
        except OSError as exc:  # the caller's path is wrong, the sandbox is fine
            send_reply({"id": request["id"], "ok": False, "errno": exc.errno or 5,
                        "error": exc.strerror or str(exc)})
            return
        header["id"] = request["id"]
        send_reply(header, parts)
    elif op == "run_argv":
        header, parts = run_argv(request)
        header["id"] = request["id"]
        send_reply(header, parts)
    elif op == "reset_state":
        shell.drop_zygote()
        shell.env = dict(shell.initial_env)
        shell.cwd = shell.initial_cwd
        send_reply({"id": request["id"], "ok": True})
    else:
        send_reply({"id": request.get("id"), "ok": False, "error": "unknown op %r" % op})


# =================================================================================================
# 3. Wire: requests on stdin, replies on stdout
# =================================================================================================

def stdin_reader():
    """Reads request lines; EOF (owner gone) ends the container."""
    buffer = b""
    pending = []
    while True:
        try:
            chunk = os.read(0, READ_CHUNK)
        except InterruptedError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            kill_everything_and_exit(0)
        if b"\n" not in chunk:  # a long line (a file's content): do not rescan what came before
            pending.append(chunk)
            continue
        buffer = b"".join(pending) + buffer + chunk if pending else buffer + chunk
        del pending[:]
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError as exc:
                send_reply({"id": None, "ok": False, "error": "bad request: %s" % exc})
                continue
            with REQUESTS_COND:
                REQUESTS.append(request)
                REQUESTS_COND.notify()


def send_reply(header, parts=()):
    """Write one reply frame to stdout (whole, under the write lock)."""
    body = b"".join(parts)
    header = dict(header)
    header["parts"] = [len(p) for p in parts]
    head = json.dumps(header, separators=(",", ":")).encode()
    frame = MAGIC + b"%08x%08x\n" % (len(head), len(body)) + head + body
    with WRITE_LOCK:
        view = memoryview(frame)
        while view:
            written = os.write(1, view)
            view = view[written:]


# =================================================================================================
# 4. The persistent shell
# =================================================================================================

class Shell:
    """The persistent shell: working directory and exported environment carried from command to command."""

    def __init__(self):
        env = dict(os.environb)
        env.pop(TAG_VAR, None)  # a task's own TA_* variables (its env) are kept
        self.initial_env = env
        self.initial_cwd = os.getcwd()
        self.env = dict(env)
        self.cwd = self.initial_cwd
        self.zygote = None

    def _command_env(self, stateless, overrides, tag):
        env = dict(self.initial_env if stateless else self.env)
        for key, value in (overrides or {}).items():
            env[key.encode("utf-8", "surrogateescape")] = value.encode("utf-8", "surrogateescape")
        env[TAG_VAR] = tag.encode()
        return env

    # --- the zygote --------------------------------------------------------------------------
    def prepare_zygote(self):
        """Have a zygote with the current state ready (failure just means commands start bash)."""
        if self.zygote is not None:
            if self.zygote.alive() and self.zygote.matches(self.cwd, self.env):
                return
            self.drop_zygote()
        try:
            self.zygote = Zygote(self.cwd, self.env)
        except (SpawnError, OSError):
            self.zygote = None

    def drop_zygote(self):
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None

    # --- ops -----------------------------------------------------------------------------------
    def run(self, request):
        timeout = float(request["timeout"])
        merge = bool(request.get("merge", True))
        stateless = bool(request.get("stateless", False))
        overrides = request.get("env") or {}
        workdir = request.get("cwd")
        cap = int(request.get("cap", 65536))
        persist = not stateless and not overrides and not workdir
        cwd = workdir or (self.initial_cwd if stateless else self.cwd)
        command = request["cmd"]
        tag = new_tag()
        self.reap_background()

        if not request.get("block", True):
            return self._run_background(command, cwd, self._command_env(stateless, overrides, tag))

        out_r, out_w = os.pipe()
        err_r, err_w = (None, out_w) if merge else os.pipe()
        state_r, state_w = os.pipe()
        oom_before = oom_kills()
        started = time.monotonic()
        proc = pid = None
        try:
            if persist:
                self.prepare_zygote()
            if persist and self.zygote is not None:
                try:
                    pid = self.zygote.start(command, tag, out_w, err_w, state_w, min(5.0, timeout))
                except ZygoteError:
                    self.zygote.close(tag)
                    self.zygote = None
                    if time.monotonic() - started >= timeout:
                        for fd in (out_r, out_w, state_r, state_w) + (() if merge else (err_r, err_w)):
                            close_quietly(fd)
                        return {"ok": True, "exit_code": 124, "timed_out": True,
                                "duration_s": time.monotonic() - started, "out_cut": 0, "err_cut": 0,
                                "oom_killed": False, "cwd": self.cwd}, [b""] + ([] if merge else [b""])
            if pid is None:
                patience = max(0.0, min(2.0, timeout - (time.monotonic() - started)))
                proc = start_fresh_bash(command, cwd, self._command_env(stateless, overrides, tag),
                                        out_w, err_w, state_w, patience)
                pid = proc.pid
        except SpawnError as exc:
            for fd in (out_r, out_w, state_r, state_w) + (() if merge else (err_r, err_w)):
                close_quietly(fd)
            header = {"ok": True, "exit_code": 126, "timed_out": False,
                      "duration_s": time.monotonic() - started, "out_cut": 0, "err_cut": 0,
                      "oom_killed": False, "cwd": self.cwd}
            return header, [str(exc).encode() + b"\n"] + ([] if merge else [b""])
        if proc is not None:  # a fresh bash: the server's write ends are not needed
            close_quietly(out_w)
            if not merge:
                close_quietly(err_w)
            out_w = err_w = None
        zygote = self.zygote if proc is None else None

        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:  # already exited and reaped by the zygote
            pidfd = None
        captures = {out_r: Capture(cap)}
        if err_r is not None:
            captures[err_r] = Capture(cap)
        state = bytearray()
        open_fds = [out_r, state_r] + ([err_r] if err_r is not None else [])
        for fd in open_fds:
            os.set_blocking(fd, False)
        deadline = started + timeout
        timed_out = False
        exited = pidfd is None
        while not exited:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            try:
                ready, _, _ = select.select(open_fds + [pidfd], [], [], remaining)
            except InterruptedError:
                continue
            for fd in ready:
                if fd == pidfd:
                    exited = True
                    continue
                self._read_into(fd, captures, state, open_fds)
        if timed_out:
            kill_group_and_tag(pid, tag.encode())
        status = None
        if proc is not None:
            status = proc.wait()
        elif timed_out and pidfd is not None:
            select.select([pidfd], [], [], 1.0)
        if pidfd is not None:
            os.close(pidfd)
        # the command's shell is gone: close our write ends, take what is already in the pipes
        # without waiting for EOF, and leave pipes still held by background children to a drainer
        for fd in (out_w, err_w if not merge else None, state_w):
            if fd is not None:
                close_quietly(fd)
        for fd in list(open_fds):
            self._read_into(fd, captures, state, open_fds, drain=True)
        for fd in list(open_fds):
            if fd == state_r:
                os.close(fd)
            else:
                drain_forever(fd)
        duration = time.monotonic() - started

        exit_code = None
        if not timed_out and state:
            fields = bytes(state).split(b"\0", 2)
            if len(fields) == 3 and fields[0].isdigit():
                exit_code = int(fields[0])
                if persist:
                    self.cwd = fields[1].decode("utf-8", "surrogateescape") or self.cwd
                    new_env = parse_export_p(fields[2])
                    for volatile in (TAG_VAR, b"SHLVL", b"_"):
                        new_env.pop(volatile, None)
                    if new_env:
                        self.env = new_env
        if exit_code is None and status is None and zygote is not None and not timed_out:
            rc = zygote.read_line("rc", tag, 0.5)  # no trap ran (killed): the zygote's wait status
            status = int(rc) if rc and rc.lstrip("-").isdigit() else None
        if exit_code is None:
            exit_code = status if status is not None else -1  # negative: killed by a signal
        if timed_out:
            exit_code = 124
        oom_after = oom_kills()
        out = captures[out_r]
        err = captures[err_r] if err_r is not None else None
        parts = [out.value()] + ([err.value()] if err is not None else [])
        header = {
            "ok": True,
            "exit_code": exit_code,
            "timed_out": timed_out,
            "duration_s": duration,
            "out_cut": out.cut,
            "err_cut": err.cut if err is not None else 0,
            "oom_killed": oom_after > oom_before >= 0,
            "cwd": self.cwd,
        }
        return header, parts

    def _read_into(self, fd, captures, state, open_fds, drain=False):
        while True:
            try:
                data = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                if fd in open_fds:
                    open_fds.remove(fd)
                    os.close(fd)
                return
            if fd in captures:
                captures[fd].feed(data)
            else:
                state += data
            if not drain and len(data) < READ_CHUNK:
                return

    def _run_background(self, command, cwd, env):
        null = os.open(os.devnull, os.O_RDWR)
        try:
            proc = spawn_bash(OOM_ADJ + command + "\n", cwd, env, null, null, null, 2.0)
        except SpawnError as exc:
            return {"ok": True, "exit_code": 126, "timed_out": False, "duration_s": 0.0,
                    "out_cut": 0, "err_cut": 0, "oom_killed": False, "cwd": self.cwd}, [str(exc).encode() + b"\n"]
        finally:
            os.close(null)
        BACKGROUND.append(proc)
        return {"ok": True, "exit_code": 0, "timed_out": False, "pid": proc.pid,
                "duration_s": 0.0, "out_cut": 0, "err_cut": 0, "oom_killed": False, "cwd": self.cwd}, []

    def reap_background(self):
        for proc in list(BACKGROUND):
            if proc.poll() is not None:
                BACKGROUND.remove(proc)


# =================================================================================================
# 5. Starting bash: the zygote, fresh shells
# =================================================================================================

OOM_ADJ = "echo 1000 >/proc/self/oom_score_adj 2>/dev/null; "
"""Prologue making the agent's processes the OOM killer's first choice. Prologues share the
command's first line so that bash's error messages keep the command's own line numbers."""
STATE_TRAP = (
    "__ta_state() { __ta_rc=$?; set +eu; { printf '%%s\\0%%s\\0' \"$__ta_rc\" \"$PWD\"; export -p; } "
    ">/proc/%d/fd/%d 2>/dev/null; exit $__ta_rc; }; trap __ta_state EXIT; "
)
"""Bash prologue: on exit, write ``rc NUL cwd NUL`` and ``export -p`` (builtins only, no fork) to the state pipe."""
ZYGOTE_SCRIPT = (
    OOM_ADJ + "set -m; "
    "__ta_state() { __ta_rc=$?; set +eu; { printf '%%s\\0%%s\\0' \"$__ta_rc\" \"$PWD\"; export -p; } "
    ">/proc/%(spid)d/fd/$__ta_st 2>/dev/null; exit $__ta_rc; }; "
    "while read -r __ta_tag __ta_out __ta_err __ta_st; do "
    "( trap __ta_state EXIT; export TA_CMD_TAG=$__ta_tag; exec </dev/null; "
    "IFS= read -r -d '' __ta_cmd </proc/%(spid)d/fd/%(mem)d; "
    "unset __ta_tag __ta_out __ta_err; eval \"$__ta_cmd\"\n"
    ") >/proc/%(spid)d/fd/$__ta_out 2>/proc/%(spid)d/fd/$__ta_err & "
    "echo \"pid $__ta_tag $!\"; wait $!; echo \"rc $__ta_tag $?\"; done\n"
)
"""The zygote: a bash with job control (so each command's subshell gets its own process group)
that, for each line ``tag out err state`` on its stdin, forks a subshell that runs the command
from the server's memfd with its output on the given pipes, reports ``pid`` and ``rc`` lines on
its stdout, and dumps the subshell's ``rc``, ``$PWD`` and ``export -p`` to the state pipe on exit.
A fork of a small bash is far cheaper than starting a process, and the zygote carries the
persistent directory and environment: when a command changes them, the zygote is replaced."""


class ZygoteError(Exception):
    """The zygote died or stopped answering; the command falls back to a fresh bash."""


class Zygote:
    """The running zygote bash (see ``ZYGOTE_SCRIPT``) for one working directory and environment."""

    def __init__(self, cwd, env):
        self.cwd = cwd
        self.env = dict(env)
        self.memfd = os.memfd_create("ta-command")
        self.ctl_r, ctl_w = os.pipe()
        go_r, self.go_w = os.pipe()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            script = ZYGOTE_SCRIPT % {"spid": SELF_PID, "mem": self.memfd}
            self.proc = spawn_bash(script, cwd, env, go_r, ctl_w, null, 0.0)
        except BaseException:
            for fd in (self.memfd, self.ctl_r, self.go_w):
                close_quietly(fd)
            raise
        finally:
            for fd in (go_r, ctl_w, null):
                close_quietly(fd)
        os.set_blocking(self.ctl_r, False)
        self.lines = []
        self.partial = b""

    def alive(self):
        return self.proc.poll() is None

    def matches(self, cwd, env):
        return self.cwd == cwd and self.env == env

    def start(self, command, tag, out_w, err_w, state_w, timeout):
        """Fork a subshell running ``command``; returns its pid (ZygoteError after ``timeout``)."""
        data = command.encode("utf-8", "surrogateescape") + b"\n"
        try:
            os.ftruncate(self.memfd, 0)
            offset = 0
            while offset < len(data):
                offset += os.pwrite(self.memfd, data[offset:], offset)
            os.write(self.go_w, ("%s %d %d %d\n" % (tag, out_w, err_w, state_w)).encode())
        except OSError as exc:
            raise ZygoteError(str(exc)) from None
        line = self.read_line("pid", tag, timeout)
        if line is None:
            raise ZygoteError("no pid from the zygote")
        return int(line)

    def read_line(self, kind, tag, timeout):
        """Value of the next ``kind tag VALUE`` line, skipping stale ones; None on timeout or EOF."""
        deadline = time.monotonic() + timeout
        prefix = ("%s %s " % (kind, tag)).encode()
        while True:
            while self.lines:
                line = self.lines.pop(0)
                if line.startswith(prefix):
                    return line[len(prefix):].decode()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.ctl_r], [], [], remaining)
            if not ready:
                return None
            try:
                chunk = os.read(self.ctl_r, 4096)
            except BlockingIOError:
                continue
            if not chunk:
                return None
            *complete, self.partial = (self.partial + chunk).split(b"\n")
            self.lines.extend(complete)

    def close(self, tag=None):
        """Kill the zygote and any subshell it forked (when ``tag`` is given, the command's processes too).

        A zombie child is a finished command not yet reaped: its process group is what it left running in the
        background (a server started with ``&``), which must outlive the zygote being replaced."""
        close_quietly(self.go_w)
        for child in children_of(self.proc.pid, live_only=True):
            try:
                os.killpg(child, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.proc.kill()
            self.proc.wait()
        except OSError:
            pass
        close_quietly(self.ctl_r)
        close_quietly(self.memfd)
        if tag is not None:
            kill_group_and_tag(None, tag.encode())


class SpawnError(Exception):
    """bash could not be started (process or memory limit); reported as a failed command."""


def start_fresh_bash(command, cwd, env, out_w, err_w, state_w, patience):
    """A fresh bash for commands the zygote cannot run (stateless, per-command overrides); its Popen."""
    script = (STATE_TRAP % (SELF_PID, state_w)) + OOM_ADJ + command + "\n"
    return spawn_bash(script, cwd, env, subprocess.DEVNULL, out_w, err_w, patience)


def spawn_bash(script, cwd, env, stdin_fd, stdout_fd, stderr_fd, patience):
    """Start ``bash -c script`` in a new session (vfork+exec through subprocess); returns the Popen.

    When the process limit is reached (EAGAIN) it retries for ``patience`` seconds, then raises
    SpawnError: the command fails, the sandbox is not broken.
    """
    if not os.path.isdir(cwd):
        cwd = "/"
    give_up = time.monotonic() + patience
    delay = 0.005
    while True:
        try:
            return subprocess.Popen(
                [b"bash", b"-c", script.encode("utf-8", "surrogateescape")],
                executable=b"/bin/bash",
                stdin=stdin_fd,
                stdout=stdout_fd,
                stderr=stderr_fd,
                cwd=cwd,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            if exc.errno not in (11, 12):  # EAGAIN, ENOMEM
                raise
            if time.monotonic() + delay > give_up:
                raise SpawnError("cannot start the command: %s (process or memory limit reached; "
                                 "kill some processes)" % (exc.strerror or exc)) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def new_tag():
    return os.urandom(8).hex()


# =================================================================================================
# 6. Output: capped capture, drainer of pipes left to background children
# =================================================================================================

class Capture:
    """Head + tail of one stream, capped at the source; counts the bytes cut from the middle."""

    def __init__(self, cap):
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.cut = 0

    def feed(self, data):
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail += data
        excess = len(self.tail) - self.half
        if excess > 0:
            del self.tail[:excess]
            self.cut += excess

    def value(self):
        return bytes(self.head) + bytes(self.tail)


class Drainer:
    """One thread that keeps reading (and dropping) pipes still held by background children of
    finished commands, so those children never get SIGPIPE. A single long-lived thread, because a
    new thread per pipe cannot be started when the agent has used up the pids limit."""

    def __init__(self):
        self.lock = threading.Lock()
        self.fds = set()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        threading.Thread(target=self._loop, daemon=True).start()

    def add(self, fd):
        os.set_blocking(fd, False)
        with self.lock:
            self.fds.add(fd)
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass

    def _loop(self):
        while True:
            with self.lock:
                fds = list(self.fds)
            try:
                ready, _, _ = select.select(fds + [self.wake_r], [], [])
            except (OSError, ValueError):
                time.sleep(0.05)
                continue
            for fd in ready:
                if fd == self.wake_r:
                    try:
                        os.read(self.wake_r, 4096)
                    except OSError:
                        pass
                    continue
                try:
                    data = os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    with self.lock:
                        self.fds.discard(fd)
                    close_quietly(fd)


def drain_forever(fd):
    if not DRAINER:
        DRAINER.append(Drainer())
    DRAINER[0].add(fd)


def close_quietly(fd):
    try:
        os.close(fd)
    except OSError:
        pass


# =================================================================================================
# 7. The exported environment: parsing bash's `export -p`
# =================================================================================================

ANSI_ESCAPES = {
    ord("a"): 7, ord("b"): 8, ord("e"): 27, ord("E"): 27, ord("f"): 12, ord("n"): 10,
    ord("r"): 13, ord("t"): 9, ord("v"): 11, ord("\\"): 92, ord("'"): 39, ord('"'): 34, ord("?"): 63,
}
OCTAL = b"01234567"
HEX = b"0123456789abcdefABCDEF"


def parse_export_p(data):
    """Exported variables from bash's ``export -p`` output: {name: value} as bytes.

    Values come double-quoted (with \\ before " \\ $ `) or, when they hold control or non-ASCII
    bytes, ANSI-C quoted ($'...'). Exported names without a value are left out.
    """
    env = {}
    i, n = 0, len(data)
    while i < n:
        if data.startswith(b"declare -x ", i):
            i += 11
        elif data.startswith(b"export ", i):
            i += 7
        else:
            j = data.find(b"\n", i)
            i = n if j < 0 else j + 1
            continue
        j = i
        while j < n and data[j] not in (0x3D, 0x0A):
            j += 1
        name = data[i:j]
        if j >= n or data[j] == 0x0A:
            i = j + 1
            continue
        j += 1
        out = bytearray()
        if data.startswith(b'"', j):
            j += 1
            while j < n and data[j] != 0x22:
                if data[j] == 0x5C and j + 1 < n:
                    j += 1
                out.append(data[j])
                j += 1
            j += 1
        elif data.startswith(b"$'", j):
            j += 2
            while j < n and data[j] != 0x27:
                c = data[j]
                if c != 0x5C or j + 1 >= n:
                    out.append(c)
                    j += 1
                    continue
                e = data[j + 1]
                if e in OCTAL:
                    k = j + 1
                    while k < n and k < j + 4 and data[k] in OCTAL:
                        k += 1
                    out.append(int(data[j + 1:k], 8) & 0xFF)
                    j = k
                elif e == 0x78:  # \xHH
                    k = j + 2
                    while k < n and k < j + 4 and data[k] in HEX:
                        k += 1
                    out.append(int(data[j + 2:k] or b"0", 16))
                    j = k
                elif e == 0x63 and j + 2 < n:  # \cX
                    out.append(data[j + 2] & 0x1F)
                    j += 3
                elif e in ANSI_ESCAPES:
                    out.append(ANSI_ESCAPES[e])
                    j += 2
                else:
                    out += data[j:j + 2]
                    j += 2
            j += 1
        else:
            k = data.find(b"\n", j)
            k = n if k < 0 else k
            out += data[j:k]
            j = k
        env[name] = bytes(out)
        k = data.find(b"\n", j)
        i = n if k < 0 else k + 1
    return env


# =================================================================================================
# 8. Processes: listing, killing, the OOM counter
# =================================================================================================

def list_pids():
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            pid = int(name)
            if pid != 1 and pid != SELF_PID:
                pids.append(pid)
    return pids


def children_of(parent, live_only=False):
    """Pids whose parent is ``parent`` (from /proc/PID/stat); ``live_only``: not zombies."""
    found = []
    for pid in list_pids():
        try:
            with open("/proc/%d/stat" % pid, "rb") as handle:
                stat = handle.read()
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[1]) == parent and not (live_only and fields[0] == b"Z"):
                found.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def pids_with_tag(tag):
    needle = TAG_VAR + b"=" + tag
    found = []
    for pid in list_pids():
        try:
            with open("/proc/%d/environ" % pid, "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(pid)
    return found


def kill_group_and_tag(pgid, tag):
    """SIGKILL the process group, then every straggler carrying ``tag`` (setsid, double fork)
    until a sweep finds none. Zombies have an empty environ, so they do not count."""
    for attempt in range(40):
        if pgid is not None and pgid > 1:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        stragglers = pids_with_tag(tag)
        for pid in stragglers:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not stragglers and attempt >= 1:
            return
        time.sleep(0.002)


def kill_all():
    """Kill every process but init and this server; return how many were killed."""
    killed = set()
    for _ in range(50):
        pids = list_pids()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        for proc in list(BACKGROUND):
            proc.wait()
            BACKGROUND.remove(proc)
        time.sleep(0.005)
    return len(killed)


def process_state(pid):
    """The state letter of ``pid`` (R, S, D, T, t, Z, ...), None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            stat = handle.read()
        return stat[stat.rindex(b")") + 2:].split()[0].decode("ascii")
    except (OSError, ValueError, IndexError):
        return None


def stop_all():
    """SIGSTOP every process but init and this server until none runs: the grader's freeze, so that nothing
    of the agent's acts while the grader inspects and stages (its verifier thaws them for the tests).
    Returns (pids stopped here, pids that were stopped already, pids still not stopped)."""
    stopped, already, running = set(), set(), []
    for _ in range(400):
        running = []
        for pid in list_pids():
            state = process_state(pid)
            if state is None or state in ("Z", "X", "x"):
                continue
            if state in ("T", "t"):
                if pid not in stopped:
                    already.add(pid)
                continue
            running.append(pid)
        if not running:
            break
        for pid in running:
            try:
                os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)
                already.discard(pid)
            except OSError:
                pass
        time.sleep(0.001)
    return sorted(stopped), sorted(already), running


def kill_everything_and_exit(code):
    try:
        for pid in list_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    finally:
        os._exit(code)


def oom_kills():
    """The memory cgroup's OOM-kill counter (-1 when unknown); the file is kept open and re-read."""
    try:
        if not OOM_FD:
            try:
                OOM_FD.append(os.open(OOM_CONTROL, os.O_RDONLY))
            except OSError:
                OOM_FD.append(os.open(OOM_EVENTS, os.O_RDONLY))
        text = os.pread(OOM_FD[0], 4096, 0)
        for line in text.splitlines():
            if line.startswith(b"oom_kill "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return -1


# =================================================================================================
# 8b. Files and privileged runs over this channel (the bwrap backend; Docker uses its Engine API)
# =================================================================================================

def op_read_file(request):
    """The whole file (symlinks followed) as the reply's one part."""
    path = request["path"]
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the server
    try:
        mode = os.fstat(fd).st_mode
        if mode & 0o170000 == 0o040000:
            raise IsADirectoryError(21, "Is a directory", path)
        if mode & 0o170000 != 0o100000:
            raise FileNotFoundError(2, "Not a regular file", path)
        os.set_blocking(fd, True)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return {"ok": True}, [b"".join(chunks)]


def op_write_file(request):
    """Create or replace a file (parents created; a directory is never replaced): temp file + rename."""
    path = request["path"]
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory", path)
    parent = os.path.dirname(path) or "/"
    try:
        os.makedirs(parent, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(20, "Not a directory", path) from None
    write_atomically(path, binascii.a2b_base64(request.get("data", "")), int(request.get("mode", 0o644)))
    return {"ok": True}, []


def write_atomically(path, data, mode):
    temp = "%s.ta-%s" % (path, os.urandom(4).hex())
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode & 0o7777)
    finally:
        os.close(fd)
    try:
        os.rename(temp, path)
    except OSError:
        close_quietly_unlink(temp)
        raise


def close_quietly_unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def op_put_files(request):
    """Unpack entries (d: directory, f: file, l: symlink) under ``dest``, which must exist; as root."""
    dest = request["dest"]
    if not os.path.isdir(dest):
        raise FileNotFoundError(2, "No such file or directory", dest)
    for entry in request.get("entries", []):
        name = entry["name"].strip("/")
        if not name or ".." in name.split("/"):
            raise PermissionError(1, "entry name escapes the destination", name)
        path = os.path.join(dest, name)
        kind, mode = entry["type"], int(entry.get("mode", 0o644)) & 0o7777
        uid, gid = int(entry.get("uid", 0)), int(entry.get("gid", 0))
        if kind == "d":  # like an untar: a symlink or file in the way is replaced by the directory
            if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                os.unlink(path)
            if not os.path.isdir(path):
                os.mkdir(path, mode)
            os.chmod(path, mode)
        elif kind == "l":
            if os.path.lexists(path) and not os.path.isdir(path):
                os.unlink(path)
            os.symlink(entry["link"], path)
        else:
            write_atomically(path, binascii.a2b_base64(entry.get("data", "")), mode)
        os.lchown(path, uid, gid)
    return {"ok": True}, []


FILE_OPS = {"read_file": op_read_file, "write_file": op_write_file, "put_files": op_put_files}


def run_argv(request):
    """Run ``argv`` directly (no shell) with cwd / and only ``env``; output merged and capped at RUN_CAP.

    At the deadline every process but this server is killed and ``timed_out`` is set."""
    started = time.monotonic()
    timeout = float(request["timeout"])
    env = dict((k.encode(), v.encode()) for k, v in (request.get("env") or {}).items())
    try:
        proc = subprocess.Popen([a.encode("utf-8", "surrogateescape") for a in request["argv"]],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                cwd="/", env=env, start_new_session=True, close_fds=True)
    except OSError as exc:
        return {"ok": True, "exit_code": 127, "timed_out": False}, [("cannot run: %s\n" % exc).encode()]
    capture = Capture(RUN_CAP)
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    pidfd = os.pidfd_open(proc.pid)
    timed_out = False
    while True:
        remaining = started + timeout - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([fd, pidfd], [], [], remaining)
        if fd in ready:
            try:
                data = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                data = None
            if data == b"":
                break
            if data:
                capture.feed(data)
                continue
        if pidfd in ready:  # exited: take what is in the pipe; a child left holding it does not keep us waiting
            while True:
                try:
                    data = os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    break
                if not data:
                    break
                capture.feed(data)
            break
    os.close(pidfd)
    if timed_out:
        kill_all()
    proc.stdout.close()
    status = proc.wait()
    return {"ok": True, "exit_code": 124 if timed_out else status, "timed_out": timed_out,
            "out_cut": capture.cut}, [capture.value()]


# =================================================================================================
# 9. Staying out of the agent's reach
# =================================================================================================

SERVER_NAME = "ta-sandbox"
"""Name (argv[0] and comm) the server runs under: no "python" in it, see ``stay_out_of_reach``."""
SHRUGGED_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def stay_out_of_reach():
    """Keep an agent's ``pkill -f python`` / ``killall python3`` from ending the sandbox.

    A dead server would turn the model's own command into an infrastructure error, and drop the
    trial from the pass rate instead of failing it. So the server re-executes itself (source in a
    memfd) under a command line without "python", renames its ``comm``, and ignores the
    catchable signals that init forwards when the agent signals PID 1, whose command line still
    names python3. Handlers (not SIG_IGN) are used so that commands start with default dispositions.
    """
    source = globals().get("TA_SOURCE")
    if source and sys.executable and hasattr(os, "memfd_create"):
        # python finds its prefix from argv[0]: keep it in the real interpreter's directory
        argv0 = os.path.join(os.path.dirname(os.path.realpath(sys.executable)), SERVER_NAME)
        argv = [argv0, "-I", "-S", "-c"]
        try:
            probe = subprocess.run(argv + ["import encodings, json, select, subprocess, threading"],
                                   executable=sys.executable, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
            if probe.returncode == 0:  # otherwise this python cannot start under another name: stay as we are
                fd = os.memfd_create(SERVER_NAME, 0)  # inherited across exec
                view = memoryview(source)
                while view:
                    view = view[os.write(fd, view):]
                loader = ("import os;s=os.pread(%d,%d,0);os.close(%d);"
                          "exec(compile(s,%r,'exec'),{'__name__':'__main__'})" % (fd, len(source), fd, SERVER_NAME))
                os.execv(sys.executable, argv + [loader] + sys.argv[1:])
        except (OSError, subprocess.SubprocessError):
            pass  # keep running as we are
    try:
        with open("/proc/self/comm", "w") as handle:
            handle.write(SERVER_NAME)
    except OSError:
        pass
    for name in SHRUGGED_SIGNALS:
        signal.signal(getattr(signal, name), lambda signum, frame: None)


main()
