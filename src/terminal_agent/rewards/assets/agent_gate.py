"""The agent's processes beside the verifier, for tasks whose tests talk to a service the agent started.

Imported by the in-container runners (``harbor_runner.py``, ``verifier_runner.py``) from the verifier
directory. Standard library only, no f-strings (the image's python may be old).

Before the grader inspected and staged anything, the sandbox's shell server stopped (SIGSTOP) every
process but init and itself: the agent's daemons are frozen, not dead. Here the runner

* ``adopt``s them: every process but the kept ones must still be stopped (one that runs escaped the
  freeze: a signal), and remembers which ones the agent had stopped itself (never continued);
* ``watch``es the reward files and everything the grader staged (tests, runtime, runner): their state
  (lstat; the reward files' content too) is recorded at every change of phase;
* ``thaw``s them (SIGCONT) so that the tests can talk to them, and ``freeze``s them again (every process
  outside the verifier's session, until none runs) when the tests are over: at the end of the outermost
  pytest session (``ta_session_gate.py`` asks for it, or the weighted runner's own hook) and when test.sh
  exits;
* judges: a reward file whose last change happened while the agent's processes ran is *untrusted* (the
  agent may have written it), and a staged file or directory that changed while they ran is a tamper
  signal. Whatever the verifier writes once they are frozen is its own: no agent process can act then.
"""

import hashlib
import os
import signal
import stat
import time

SOCKET_NAME = "gate/ctl.sock"
"""The runner's control socket in the verifier dir: the verifier's pytest connects and says ``freeze`` when its
tests are over (the runner answers ``done`` once they are frozen and the watched state is recorded) or ``thaw``
when a later session starts. The kernel tells the runner who connected (SO_PEERCRED): only the verifier's
processes are obeyed."""
STOPPED = ("T", "t")
GONE = ("Z", "X", "x")
HASH_CAP = {"reward": 16 << 20, "staged": 1 << 20}
"""Bytes hashed per watched file: every reward file; staged files up to 1 MiB (the tests, the runner, the
stand-ins), so a same-size rewrite within one tick of the coarse file clock still shows."""


def process_info(pid):
    """(state, ppid, sid) of ``pid`` from /proc, None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            data = handle.read()
        fields = data[data.rindex(b")") + 2:].split()
        return fields[0].decode("ascii"), int(fields[1]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return None


def processes():
    """{pid: (state, ppid, sid)} of every process there is now."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = process_info(int(name))
            if info is not None:
                found[int(name)] = info
    return found


def descends_from(pid, ancestor, table=None):
    """Whether ``ancestor`` is ``pid`` or one of its ancestors now."""
    table = table if table is not None else processes()
    seen = set()
    while pid and pid not in seen:
        if pid == ancestor:
            return True
        seen.add(pid)
        info = table.get(pid)
        pid = info[1] if info else 0
    return False


def path_state(path, cap):
    """What identifies ``path`` now: None when absent; type, inode, mode, size and times, and a hash of a
    regular file's bytes when it has at most ``cap`` of them. ctime cannot be set from user space: a write that
    restored the bytes and the mtime still shows."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    state = (stat.S_IFMT(info.st_mode), info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns,
             info.st_ctime_ns)
    if stat.S_ISREG(info.st_mode) and info.st_size <= cap:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return state + ("unreadable",)
        digest = hashlib.sha256()
        try:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                digest.update(chunk)
        finally:
            os.close(fd)
        state = state + (digest.hexdigest(),)
    return state


def tree_paths(root, skip=()):
    """``root`` and everything under it (no symlink followed), but the names in ``skip`` and what they hold."""
    found = [root]
    for parent, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(parent, d) not in skip]
        for name in dirs + files:
            path = os.path.join(parent, name)
            if path not in skip:
                found.append(path)
    return found


class AgentGate:
    """The agent's processes, frozen and thawed around the tests, and what changed while they ran."""

    def __init__(self, keep, frozen, already_stopped, armed=False):
        self.armed = armed
        """Only a runner inside a sandbox arms it: anywhere else, stopping "every process but init" stops a host."""
        self.keep = set(int(p) for p in keep) | {1, os.getpid()}
        self.held = set(int(p) for p in frozen)
        """Stopped by the grader or by us: ours to continue."""
        self.agent_stopped = set(int(p) for p in already_stopped)
        """Stopped by the agent itself before grading: never continued."""
        self.running = False
        self.watched = {}
        """path -> ``reward`` (content counts) or ``staged``."""
        self.marks = []
        """(phase that starts here: ``running`` or ``frozen``, {path: state})."""
        self.transitions = []
        """(phase, monotonic seconds, pids involved), for the grader's record."""

    @property
    def active(self):
        """Whether any process of the agent's was left: without one, there is nothing to thaw or fear."""
        return bool(self.held)

    def _signal(self, pid, signum):
        if not self.armed:
            raise RuntimeError("AgentGate is not armed: only the verifier runner inside a sandbox signals processes")
        try:
            os.kill(pid, signum)
            return True
        except OSError:
            return False

    def adopt(self):
        """Check that the grader's freeze held; stop what escaped it. Signals (strings) for the grader."""
        escaped = []
        for pid, (state, _, _) in processes().items():
            if pid in self.keep or state in GONE:
                continue
            if state in STOPPED and (pid in self.held or pid in self.agent_stopped):
                continue
            escaped.append(pid)
        if escaped:
            self.held.update(escaped)
            self._stop_all(set())
            return ["%d process(es) ran after the grader froze the agent's processes" % len(escaped)]
        return []

    def watch(self, paths, kind):
        for path in paths:
            if self.watched.get(path) != "reward":
                self.watched[path] = kind

    def record(self, phase):
        """Record the state of what is watched at the start of a ``running`` or ``frozen`` phase."""
        states = {}
        for path, kind in self.watched.items():
            states[path] = path_state(path, HASH_CAP[kind])
        self.marks.append((phase, states))

    def thaw(self):
        """Let the frozen processes run (the tests may talk to them). Idempotent."""
        if self.running:
            return
        self.record("running")
        pids = sorted(self.held - self.agent_stopped)
        for pid in pids:
            self._signal(pid, signal.SIGCONT)
        self.held.clear()
        self.running = True
        self.transitions.append(("running", time.monotonic(), len(pids)))

    def freeze(self, spare_sids):
        """Stop every process outside ``spare_sids`` (the verifier's sessions) but the kept ones, until none
        runs; then record the state of what is watched. Returns whether everything is stopped."""
        done = self._stop_all(set(spare_sids))
        self.running = False
        self.record("frozen")
        self.transitions.append(("frozen", time.monotonic(), len(self.held)))
        return done

    def _stop_all(self, spare_sids):
        for _ in range(500):
            pending = []
            for pid, (state, _, sid) in processes().items():
                if pid in self.keep or sid in spare_sids or state in GONE or state in STOPPED:
                    continue
                pending.append(pid)
            if not pending:
                return True
            for pid in pending:
                if self._signal(pid, signal.SIGSTOP):
                    self.held.add(pid)
            time.sleep(0.001)
        return False

    def kill_all(self):
        """SIGKILL every process but the kept ones; how many there were."""
        seen = set()
        for _ in range(200):
            pids = [pid for pid, (state, _, _) in processes().items() if pid not in self.keep and state not in GONE]
            if not pids:
                break
            for pid in pids:
                if self._signal(pid, signal.SIGKILL):
                    seen.add(pid)
            time.sleep(0.002)
        return len(seen)

    def verdict(self):
        """{"untrusted": reward paths last changed while the agent's processes ran, "changed": staged paths
        that changed while they ran, "phases": the transitions}."""
        changed_in, last_change = {}, {}
        for (phase, before), (_, after) in zip(self.marks, self.marks[1:]):
            for path in self.watched:
                if before.get(path) != after.get(path):
                    changed_in.setdefault(path, set()).add(phase)
                    last_change[path] = phase
        untrusted, changed = [], []
        for path, kind in sorted(self.watched.items()):
            if kind == "reward" and last_change.get(path) == "running":
                untrusted.append(path)
            elif kind == "staged" and "running" in changed_in.get(path, ()):
                changed.append(path)
        return {"untrusted": untrusted, "changed": changed,
                "phases": [[phase, round(at, 6), count] for phase, at, count in self.transitions]}


def make_undumpable():
    """Keep other processes of the same user out of this one (/proc/PID/mem, fd, environ; ptrace) without
    CAP_SYS_PTRACE, which the agent does not have. Best effort: False where ctypes is missing."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE, 0
    except Exception:  # noqa: BLE001 - an image without ctypes keeps the runner dumpable
        return False


def sender_allowed(sender, verifier_pid, verifier_sid):
    """Whether a freeze or thaw request from ``sender`` comes from the verifier: its session, or a descendant of
    test.sh (a process of the agent's can join neither)."""
    info = process_info(sender)
    if info is None:
        return False
    return info[2] == verifier_sid or descends_from(sender, verifier_pid)


class ControlSocket:
    """The runner's end of ``SOCKET_NAME``: requests from the verifier's pytest, the sender told by the kernel."""

    def __init__(self, path, verifier_pid):
        import socket

        self.verifier_pid = verifier_pid
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        os.chmod(path, 0o666)  # a verifier user that is not root connects too; who it is, the kernel says
        self.server.listen(16)
        self.server.setblocking(False)
        # test.sh's exit wakes the wait at once: SIGCHLD writes to a pipe the wait selects on
        self.wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        self.previous = signal.signal(signal.SIGCHLD, lambda *_: None)
        self.previous_fd = signal.set_wakeup_fd(wake_write)
        self.wake_write = wake_write

    def serve(self, gate, timeout):
        """Wait up to ``timeout`` seconds (less when a child exits) for one request and carry it out."""
        import select
        import socket
        import struct

        ready, _, _ = select.select([self.server, self.wake_read], [], [], timeout)
        if self.wake_read in ready:
            os.read(self.wake_read, 512)
        if self.server not in ready:
            return
        try:
            connection, _ = self.server.accept()
        except OSError:
            return
        try:
            connection.settimeout(2.0)
            pid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
            request = connection.recv(64).strip()
            if not sender_allowed(pid, self.verifier_pid, self.verifier_pid):
                return
            if request == b"freeze":
                sender = process_info(pid)
                gate.freeze(set([self.verifier_pid] + ([sender[2]] if sender else [])))
                connection.sendall(b"done\n")
            elif request == b"thaw":
                gate.thaw()
                connection.sendall(b"done\n")
        except OSError:
            pass
        finally:
            connection.close()

    def close(self):
        signal.set_wakeup_fd(self.previous_fd)
        signal.signal(signal.SIGCHLD, self.previous)
        for fd in (self.wake_read, self.wake_write):
            os.close(fd)
        self.server.close()
