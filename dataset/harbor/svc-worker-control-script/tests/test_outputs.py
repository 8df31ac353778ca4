import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/worker/worker.py': '9e86452aa831f8e1fd17357e1913c61625ae6c87229e9bdc4be7e0c41e35fa1e'}


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

import shutil

CTL = "/app/worker/ctl.sh"
PIDFILE = Path("/app/run/worker.pid")
LOG = Path("/app/logs/worker.log")
QUEUE = Path("/app/queue")


@pytest.fixture(autouse=True)
def clean_state():
    PIDFILE.unlink(missing_ok=True)
    for path in LOG.parent.glob("worker.log*"):
        path.unlink()
    shutil.rmtree(QUEUE, ignore_errors=True)
    (QUEUE / "incoming").mkdir(parents=True)
    (QUEUE / "done").mkdir()
    yield


def ctl(*args):
    return run("bash", CTL, *args, timeout=20)


def _job(name, numbers):
    tmp = QUEUE / f"{name}.tmp"
    tmp.write_text(" ".join(map(str, numbers)) + "\n")
    tmp.rename(QUEUE / "incoming" / f"{name}.job")


def _result(name, timeout=10):
    path = QUEUE / "done" / f"{name}.result"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text().strip()
        time.sleep(0.1)
    return None


def _workers():
    return cmdlines("worker.py")


def test_start_processes_jobs(launched):
    assert ctl("start").returncode == 0
    pid = int(PIDFILE.read_text().strip())
    assert alive(pid) and _workers() == [pid]
    _job("a", [1, 2, 3, 40])
    assert _result("a") == "46"
    assert "processed a sum=46" in LOG.read_text()


def test_status_and_no_second_instance(launched):
    assert ctl("status").returncode == 3
    assert ctl("start").returncode == 0
    pid = int(PIDFILE.read_text().strip())
    status = ctl("status")
    assert status.returncode == 0 and str(pid) in status.stdout
    assert ctl("start").returncode != 0
    time.sleep(0.5)
    assert _workers() == [pid] and int(PIDFILE.read_text().strip()) == pid


def test_stop(launched):
    assert ctl("start").returncode == 0
    pid = int(PIDFILE.read_text().strip())
    assert ctl("stop").returncode == 0
    assert not alive(pid) and not PIDFILE.exists() and _workers() == []
    assert ctl("status").returncode == 3
    assert ctl("stop").returncode == 0


def test_stale_pid_file(launched):
    dead = subprocess.Popen(["true"])
    dead.wait()
    PIDFILE.parent.mkdir(parents=True, exist_ok=True)
    PIDFILE.write_text(f"{dead.pid}\n")
    assert ctl("status").returncode == 3
    assert ctl("start").returncode == 0
    pid = int(PIDFILE.read_text().strip())
    assert pid != dead.pid and alive(pid) and _workers() == [pid]


def test_rotate_keeps_the_same_worker_logging(launched):
    assert ctl("start").returncode == 0
    pid = int(PIDFILE.read_text().strip())
    _job("first", [5, 5])
    assert _result("first") == "10"
    assert ctl("rotate").returncode == 0
    _job("second", [7])
    assert _result("second") == "7"
    time.sleep(0.3)
    rotated = Path(str(LOG) + ".1").read_text()
    assert "processed first sum=10" in rotated and "second" not in rotated
    assert "processed second sum=7" in LOG.read_text() and alive(pid) and _workers() == [pid]
    for n in range(4):
        _job(f"more{n}", [n])
        assert _result(f"more{n}") == str(n)
        assert ctl("rotate").returncode == 0
    time.sleep(0.5)
    names = sorted(path.name for path in LOG.parent.glob("worker.log*"))
    assert names == ["worker.log", "worker.log.1", "worker.log.2", "worker.log.3"]
    assert "processed more3 sum=3" in Path(str(LOG) + ".1").read_text()
    assert "processed more1 sum=1" in Path(str(LOG) + ".3").read_text()
    assert alive(pid)
