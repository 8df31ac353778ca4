import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/super/README.md': '9fc06f66ef5b76282e0c845ee2103371cd3b64c3464322574487d24b6e1119a6'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import signal
import socket
import threading
import urllib.error
import urllib.request

import pytest


def _pids():
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


class Launched:
    """Kills, when the test ends, every process that appeared after it began (daemonized ones included)."""

    def __init__(self):
        self.before = _pids()

    def stop(self):
        for _ in range(3):
            extra = sorted(_pids() - self.before - {os.getpid()})
            for pid in extra:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.2)
            for pid in extra:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except OSError:
                    pass


@pytest.fixture
def launched():
    tracker = Launched()
    try:
        yield tracker
    finally:
        tracker.stop()


def port_open(port, host="127.0.0.1"):
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def wait_port(port, timeout=15.0, host="127.0.0.1"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if port_open(port, host):
            return True
        time.sleep(0.1)
    return False


def wait_closed(port, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not port_open(port):
            return True
        time.sleep(0.1)
    return False


def http(method, url, body=None, headers=None, timeout=5):
    """(status, headers, body bytes) of one request; HTTP errors are answers too."""
    data = body.encode() if isinstance(body, str) else body
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def cmdlines(word):
    """pids whose command line holds ``word``."""
    found = []
    for pid in _pids():
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if word in line and pid != os.getpid() and alive(pid):
            found.append(pid)
    return found


def _write_config(tmp_path, programs):
    status = tmp_path / "status.json"
    lines = ["[supervisor]", f"status_file = {status}", ""]
    for name, options in programs.items():
        lines.append(f"[program:{name}]")
        lines += [f"{key} = {value}" for key, value in options.items()]
        lines.append("")
    config = tmp_path / "programs.ini"
    config.write_text("\n".join(lines))
    return config, status


def _supervise(config):
    return subprocess.Popen(["python3", "/app/super/supervise.py", str(config)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _status(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def _wait(path, check, timeout=8):
    deadline = time.time() + timeout
    while time.time() < deadline:
        state = _status(path)
        try:
            if check(state):
                return state
        except (KeyError, TypeError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"status never satisfied the check: {_status(path)}")


def _starter(tmp_path, name, tail):
    """A command that records each start in NAME.starts, then runs ``tail``."""
    return f"sh -c 'echo $$ >> {tmp_path}/{name}.starts; {tail}'"


def test_starts_every_program(launched, tmp_path):
    config, status = _write_config(tmp_path, {
        "web": {"command": _starter(tmp_path, "web", "exec sleep 300")},
        "queue": {"command": _starter(tmp_path, "queue", "exec sleep 300")}})
    _supervise(config)
    state = _wait(status, lambda s: s["web"]["state"] == "RUNNING" and s["queue"]["state"] == "RUNNING")
    for name in ("web", "queue"):
        assert alive(state[name]["pid"]) and state[name]["restarts"] == 0
        assert (tmp_path / f"{name}.starts").read_text().split() == [str(state[name]["pid"])]


def test_crashing_program_is_retried_then_fatal(launched, tmp_path):
    config, status = _write_config(tmp_path, {
        "flaky": {"command": _starter(tmp_path, "flaky", "sleep 0.2; exit 3"), "max_restarts": 2,
                  "backoff_s": 0.3},
        "steady": {"command": "sleep 300"}})
    _supervise(config)
    state = _wait(status, lambda s: s["flaky"]["state"] == "FATAL", timeout=15)
    assert state["flaky"]["restarts"] == 2 and state["flaky"]["exit_code"] == 3
    assert len((tmp_path / "flaky.starts").read_text().split()) == 3
    assert state["steady"]["state"] == "RUNNING"
    time.sleep(1)
    assert len((tmp_path / "flaky.starts").read_text().split()) == 3


def test_restart_never_and_clean_exit(launched, tmp_path):
    config, status = _write_config(tmp_path, {
        "once": {"command": _starter(tmp_path, "once", "exit 0"), "restart": "never"},
        "always": {"command": _starter(tmp_path, "always", "sleep 0.3; exit 0"), "restart": "always",
                   "max_restarts": 1, "backoff_s": 0.1}})
    _supervise(config)
    state = _wait(status, lambda s: s["once"]["state"] == "EXITED" and s["always"]["state"] == "FATAL", timeout=15)
    assert state["once"]["exit_code"] == 0 and state["once"]["restarts"] == 0
    assert len((tmp_path / "once.starts").read_text().split()) == 1
    assert len((tmp_path / "always.starts").read_text().split()) == 2


def test_killed_program_comes_back(launched, tmp_path):
    config, status = _write_config(tmp_path, {"web": {"command": "sleep 300", "backoff_s": 0.2}})
    _supervise(config)
    first = _wait(status, lambda s: s["web"]["state"] == "RUNNING")["web"]["pid"]
    os.kill(first, signal.SIGKILL)
    state = _wait(status, lambda s: s["web"]["pid"] != first and s["web"]["state"] == "RUNNING")
    assert alive(state["web"]["pid"]) and state["web"]["restarts"] == 1


def test_sigterm_stops_everything(launched, tmp_path):
    config, status = _write_config(tmp_path, {"a": {"command": "sleep 300"}, "b": {"command": "sleep 301"}})
    supervisor = _supervise(config)
    state = _wait(status, lambda s: s["a"]["state"] == "RUNNING" and s["b"]["state"] == "RUNNING")
    supervisor.send_signal(signal.SIGTERM)
    assert supervisor.wait(timeout=8) == 0
    time.sleep(0.3)
    assert not alive(state["a"]["pid"]) and not alive(state["b"]["pid"])
    final = _status(status)
    assert final["a"]["state"] == final["b"]["state"] == "STOPPED"
