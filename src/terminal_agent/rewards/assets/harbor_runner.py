"""In-container runner of a Harbor verifier (``bash /tests/test.sh``) for the terminal-agent grader.

Started by the grader, after every agent process is dead, as

    PYTHON -I -S -B VERIFIER_DIR/runner.py VERIFIER_DIR

with the job in ``VERIFIER_DIR/job.json``. In order it: SIGKILLs any process that survived the grader's
kill (counted: a tamper signal), removes stale verifier dirs and ``/logs/verifier``; replaces ``/tests``
with the task's tests (staged in ``VERIFIER_DIR/tests``); recreates ``/logs/verifier`` empty, owned by
the verifier user; moves pytest configuration files at ``/`` aside while the verifier runs (an agent's
``/pytest.ini`` or ``/conftest.py`` would otherwise configure every pytest run under ``/tests``); runs
``bash /tests/test.sh`` in the task's working directory as the verifier user, with the image's
environment (the one the backend started this runner with), the verifier's env, ``HOME`` in the verifier
dir and a PATH that puts the verifier runtime where the job says, under a deadline; kills whatever the
verifier left running; and writes everything the grader needs (exit status, the reward files and CTRF
report as read here without following a final symlink, the stand-ins' log, the output's tail) into
``VERIFIER_DIR/out/result.json``.

A task that keeps the agent's processes (``job["gate"]``: Harbor runs its verifier beside them) finds them
frozen by the grader, not dead: they stay frozen while this runner prepares, run while test.sh's tests run,
and are frozen again when the tests are over (the end of the outermost pytest session, which asks for it
through ``ta_session_gate.py``, and the exit of test.sh), then killed before anything is read. A reward file
whose last change happened while they ran does not count, nor do the tests when a staged file changed then
(``agent_gate.py``).
"""

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time

ROOT_CONFIGS = ("/pytest.ini", "/.pytest.ini", "/pyproject.toml", "/tox.ini", "/setup.cfg", "/conftest.py")
TEST_INI_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
REWARD_CAP = 64 * 1024
STDOUT_TAIL = 8000


def _read_capped(path, cap):
    """(bytes or None, note): the file without following a final symlink; None when absent or unusable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        import errno

        if exc.errno == errno.ELOOP:
            return None, "%s is a symbolic link, not a regular file (not followed)" % path
        return None, "cannot open %s: %s" % (path, exc)
    try:
        import stat

        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "%s is not a regular file" % path
        if info.st_size > cap:
            return None, "%s has %d bytes, more than %d" % (path, info.st_size, cap)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)[: cap + 1], ""
    finally:
        os.close(fd)


def _remove(path):
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def _resolve_user(spec):
    """(uid, gid, name, home) of ``spec`` (a name or a uid); root when None."""
    import pwd

    if spec is None or spec in ("", "root", "0"):
        return 0, 0, "root", "/root"
    try:
        entry = pwd.getpwuid(int(spec)) if str(spec).isdigit() else pwd.getpwnam(spec)
    except (KeyError, ValueError):
        if str(spec).isdigit():
            return int(spec), int(spec), str(spec), "/"
        raise RuntimeError("the verifier user %r does not exist in the image" % spec)
    return entry.pw_uid, entry.pw_gid, entry.pw_name, entry.pw_dir


def _image_environment():
    """The environment this runner was started with: what the backend gives a privileged process (Docker: the
    image's configured env, as ``docker exec`` inherits it). Never PID 1's: under bwrap that is the host's."""
    return dict(os.environ)


def _chown_tree(path, uid, gid):
    if uid == 0 and gid == 0:
        return
    for root, dirs, files in os.walk(path):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            try:
                os.lchown(name, uid, gid)
            except OSError:
                pass


def _seed_home(home):
    """The start-up files a new account gets (``/etc/skel``, as ``useradd -m`` copies them) into the fresh HOME:
    a login shell (tmux's, ``bash -l``) then reads ``~/.bashrc`` through ``~/.profile`` as it does in the image's
    own home. Regular files at the top of /etc/skel only, never through a symlink, at most 1 MiB each."""
    skel = "/etc/skel"
    if os.path.islink(skel) or not os.path.isdir(skel):
        return
    for name in sorted(os.listdir(skel)):
        target = os.path.join(home, name)
        if os.path.lexists(target):
            continue
        try:
            fd = os.open(os.path.join(skel, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:  # a symlink, or unreadable: not copied
            continue
        try:
            info = os.fstat(fd)
            if not (info.st_mode & 0o170000 == 0o100000) or info.st_size > 1 << 20:
                continue
            data = os.read(fd, info.st_size + 1)
        finally:
            os.close(fd)
        with open(target, "xb") as handle:
            handle.write(data)
        os.chmod(target, 0o644)


def _drop_privileges(uid, gid):
    def change():
        os.setsid()
        if uid != 0 or gid != 0:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)

    return change


def _identity(path):
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return [info.st_dev, info.st_ino, info.st_mode]


def _write_result(verifier_dir, out, identity, result):
    """``out/result.json``, written when nothing but this runner runs: a verifier dir or output dir that is
    not the one made at the start (swapped while the agent's processes ran) is a signal and is replaced,
    and a planted result file (a symlink included) is removed first."""
    if _identity(verifier_dir) != identity[0] or os.path.realpath(verifier_dir) != result.get("realpath"):
        result.setdefault("gate_signals", []).append("the verifier dir was replaced while the tests ran")
    if _identity(out) != identity[1]:
        result.setdefault("gate_signals", []).append("the verifier's output dir was replaced while the tests ran")
        if os.path.lexists(out):
            os.rename(out, out + ".replaced")
        os.mkdir(out, 0o700)
    path = os.path.join(out, "result.json")
    if os.path.lexists(path):
        _remove(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(result, handle)


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _gate_environment(env, verifier_dir, keep):
    """test.sh's environment while the agent's processes run: every pytest loads the session gate (the
    runtime's stand-in with ``-p``, any other through ``PYTEST_PLUGINS``); no byte code is written and no
    pytest cache is kept, so the tests' directories keep still and anything that appears there while the
    agent's processes run (a ``conftest.py``, a ``__pycache__`` with forged byte code) is a signal."""
    gate_dir = os.path.join(verifier_dir, "gate")
    env["TA_GATE_SOCKET"] = os.path.join(gate_dir, "ctl.sock")
    env["TA_GATE_KEEP"] = ",".join(str(p) for p in sorted(set(keep) | {os.getpid()}))
    env["TA_GATE_PLUGIN_DIR"] = gate_dir
    env["PYTEST_PLUGINS"] = ",".join(p for p in (env.get("PYTEST_PLUGINS"), "ta_session_gate") if p)
    env["PYTEST_ADDOPTS"] = " ".join(p for p in (env.get("PYTEST_ADDOPTS"), "-p no:cacheprovider") if p)
    env["PYTHONPATH"] = ":".join(p for p in (gate_dir, env.get("PYTHONPATH")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"


def _staged_paths(verifier_dir, offline):
    """What the grader staged (the tests, the runner, the runtime and its PATH dirs, the gate; the verifier
    dir's own entries are not: nothing reads an unknown one), the fresh HOME's own files when the verifier is
    offline (with a network the uv installer writes there as it should), and the pytest configuration names at
    / (moved aside, or absent): none of them may change while the agent's processes run."""
    import agent_gate

    skip = set(os.path.join(verifier_dir, name) for name in ("out", "log", "home", "aside"))
    paths = agent_gate.tree_paths("/tests") + agent_gate.tree_paths(verifier_dir, skip)[1:]
    if offline:
        for parent, _, files in os.walk(os.path.join(verifier_dir, "home")):
            paths += [os.path.join(parent, name) for name in files]
    return paths + list(ROOT_CONFIGS)


def _wait_gated(process, timeout, gate, control):
    """Wait for test.sh while the agent's processes run: freeze them when the verifier's pytest says its tests
    are over, let them run again when a later session starts. (exit code, timed out)."""
    deadline = time.monotonic() + timeout
    while True:
        exit_code = process.poll()
        if exit_code is not None:
            return exit_code, False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            _kill_group(process.pid)
            return process.wait(), True
        control.serve(gate, min(remaining, 1.0))


def main(argv):
    verifier_dir = argv[1]
    sys.path.insert(0, verifier_dir)
    import verifier_runner  # the weighted grader's runner: its process sweep and stale-output removal

    with open(os.path.join(verifier_dir, "job.json")) as handle:
        job = json.load(handle)
    keep = [int(p) for p in job.get("keep_pids", [])]
    out = os.path.join(verifier_dir, "out")
    os.mkdir(out, 0o700)
    identity = _identity(verifier_dir), _identity(out)
    result = {"realpath": os.path.realpath(verifier_dir)}
    gate = None
    if job.get("gate") is not None:  # the agent's processes are frozen, not dead: they run again for the tests
        import agent_gate

        gate = agent_gate.AgentGate(keep, job["gate"].get("frozen", []), job["gate"].get("already_stopped", []), armed=True)
        result["gate_signals"] = gate.adopt()
        result["undumpable"] = agent_gate.make_undumpable()
        result["agent_survivors"] = 0
    else:
        result["agent_survivors"] = verifier_runner._sweep_survivors(keep)

    def finish(**fields):
        result.update(fields)
        if gate is not None:  # whatever still runs stops now: nothing but this runner writes from here on
            gate.freeze(set())
            gate.kill_all()
        _write_result(verifier_dir, out, identity, result)
        return 0

    verifier_runner._remove_stale_outputs(verifier_dir)
    try:
        uid, gid, user_name, user_home = _resolve_user(job.get("user"))
    except RuntimeError as exc:
        return finish(error=str(exc))
    bash = next((p for p in ("/bin/bash", "/usr/bin/bash") if os.path.exists(p)), None)
    if bash is None:
        return finish(error="the image has no bash to run tests/test.sh")

    # /tests: exactly the task's tests
    if os.path.lexists("/tests"):
        _remove("/tests")
    try:
        os.rename(os.path.join(verifier_dir, "tests"), "/tests")
    except OSError:
        shutil.copytree(os.path.join(verifier_dir, "tests"), "/tests", symlinks=True)
    os.chmod("/tests", 0o755)
    # /logs/verifier: empty, owned by the verifier user; nothing planted survives
    if os.path.lexists("/logs") and (os.path.islink("/logs") or not os.path.isdir("/logs")):
        os.unlink("/logs")
    os.makedirs("/logs", 0o755, exist_ok=True)
    if os.path.lexists("/logs/verifier"):
        _remove("/logs/verifier")
    os.mkdir("/logs/verifier", 0o755)
    os.chown("/logs/verifier", uid, gid)
    if job.get("isolate_home", True):
        _seed_home(os.path.join(verifier_dir, "home"))
    for name in ("log", "home"):
        _chown_tree(os.path.join(verifier_dir, name), uid, gid)

    moved = []
    if not any(os.path.exists(os.path.join("/tests", n)) for n in TEST_INI_NAMES):
        aside = os.path.join(verifier_dir, "aside")
        os.mkdir(aside, 0o700)
        for index, path in enumerate(ROOT_CONFIGS):
            if os.path.lexists(path):
                os.rename(path, os.path.join(aside, str(index)))
                moved.append(path)

    env = _image_environment()
    for key in ("BASH_ENV", "ENV", "PROMPT_COMMAND", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        env.pop(key, None)
    env.update(job.get("env", {}))
    base_path = env.get("PATH") or "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    parts = list(job.get("path_head", [])) + [p for p in base_path.split(":") if p] + list(job.get("path_tail", []))
    env["PATH"] = ":".join(dict.fromkeys(parts))
    env["HOME"] = os.path.join(verifier_dir, "home") if job.get("isolate_home", True) else user_home
    env.setdefault("LC_ALL", "C.UTF-8")
    env.setdefault("DEBIAN_FRONTEND", "noninteractive")
    env["USER"] = env["LOGNAME"] = user_name
    env["TA_VERIFIER_LOG"] = os.path.join(verifier_dir, "log", "shims.jsonl")
    env["TA_VERIFIER_MODE"] = job.get("mode", "offline")
    fallback = job.get("fallback_uv_dir")
    if fallback:  # with a network: uv/uvx stand-ins only where no real uv is found (command -v still fails)
        env["BASH_FUNC_command_not_found_handle%%"] = (
            '() { case "$1" in uv|uvx) "%s/$@"; return $? ;; esac; '
            'echo "bash: $1: command not found" >&2; return 127; }' % fallback
        )

    workdir = job.get("workdir") or "/"
    if not os.path.isdir(workdir):
        workdir = "/"
    live = gate is not None and gate.active
    if live:
        import agent_gate

        _gate_environment(env, verifier_dir, keep)
        gate.watch(["/logs/verifier/" + name for name in ("reward.txt", "reward.json", "ctrf.json")], "reward")
        gate.watch(_staged_paths(verifier_dir, job.get("mode", "offline") == "offline"), "staged")
    started = time.monotonic()
    timed_out = False
    with open(os.path.join(out, "test-stdout.txt"), "wb") as stdout:
        process = subprocess.Popen(
            [bash, "/tests/test.sh"], cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
            stderr=subprocess.STDOUT, preexec_fn=_drop_privileges(uid, gid), close_fds=True,
        )
        if live:
            control = agent_gate.ControlSocket(os.path.join(verifier_dir, agent_gate.SOCKET_NAME), process.pid)
            gate.thaw()
            try:
                exit_code, timed_out = _wait_gated(process, float(job["timeout_s"]), gate, control)
            finally:
                control.close()
        else:
            try:
                exit_code = process.wait(timeout=float(job["timeout_s"]))
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(process.pid)
                exit_code = process.wait()
    duration = time.monotonic() - started
    if gate is not None:
        gate.freeze(set())
        left_running = gate.kill_all()
        result["gate"] = gate.verdict() if live else None
    else:
        left_running = verifier_runner._sweep_survivors(keep)
    for index, path in enumerate(ROOT_CONFIGS):
        if path in moved:
            os.rename(os.path.join(verifier_dir, "aside", str(index)), path)

    files = {}
    for name, cap in (("reward.txt", REWARD_CAP), ("reward.json", REWARD_CAP), ("ctrf.json", int(job.get("max_report_bytes", 8 << 20)))):
        data, note = _read_capped(os.path.join("/logs/verifier", name), cap)
        if data is not None:
            files[name] = {"b64": base64.b64encode(data).decode("ascii")}
        elif note:
            files[name] = {"error": note}
    log_data, _ = _read_capped(env["TA_VERIFIER_LOG"], 1 << 20)
    shim_log = []
    for line in (log_data or b"").decode("utf-8", "replace").splitlines():
        try:
            shim_log.append(json.loads(line))
        except ValueError:
            shim_log.append({"kind": "garbled", "message": line[:300]})
    with open(os.path.join(out, "test-stdout.txt"), "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - STDOUT_TAIL))
        tail = handle.read().decode("utf-8", "replace")
    return finish(
        exit_code=exit_code, timed_out=timed_out, duration_s=duration, left_running=left_running, files=files,
        shim_log=shim_log, stdout_tail=tail, moved_aside=moved, bash=bash, workdir=workdir,
        python=sys.version.split()[0],
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv))
