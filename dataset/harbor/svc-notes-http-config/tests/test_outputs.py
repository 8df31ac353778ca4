import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/data/notes/groceries.txt': 'a87ff8fbb9454e257a967cbfdbb624e7ea0ad4e0ed3354b16f4a9bbff8700965', '/app/data/notes/ideas.txt': '2f176b31d851877d0a8de0e78561b3d49cf3a6ddca04175605f0065acac2f1d1', '/app/notes_service/app.py': 'dfc7ecebfd1603caa2cb1fa89b2c12e5e95f0df2f81077ef025ea6a4655517b2', '/app/notes_service/service.ini.example': 'effcc8d3bae3d98ba9483445550b2756e05041079aecfda768310c3ace4b467d', '/app/secrets/token': 'e3b5e3ffb2ce452b4d582a842b6997c742f6b6f5ef88fb92e906c42df18a8ced'}


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

import configparser

PORT = 8088
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = Path("/app/secrets/token").read_text().strip()
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _start():
    result = run("bash", "/app/start.sh", timeout=15)
    assert result.returncode == 0, result.stderr
    assert wait_port(PORT), "nothing listens on 8088"


def test_starts_and_answers_health(launched):
    _start()
    status, headers, body = http("GET", BASE + "/health")
    assert status == 200 and json.loads(body) == {"status": "ok"}


def test_config_file():
    parser = configparser.ConfigParser()
    assert parser.read("/app/notes_service/service.ini")
    assert parser["server"]["host"] == "127.0.0.1" and parser["server"]["port"] == "8088"
    assert os.path.realpath(parser["storage"]["data_dir"]) == "/app/data/notes"
    assert os.path.realpath(parser["auth"]["token_file"]) == "/app/secrets/token"


def test_pid_file_names_the_server(launched):
    _start()
    pid = int(Path("/app/run/notes.pid").read_text().strip())
    assert alive(pid)
    assert "app.py" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    os.kill(pid, signal.SIGTERM)
    assert wait_closed(PORT), "the pid in the pid file is not the server"


def test_token_is_required(launched):
    _start()
    assert http("GET", BASE + "/notes")[0] == 401
    assert http("GET", BASE + "/notes", headers={"Authorization": "Bearer wrong"})[0] == 401
    status, _, body = http("GET", BASE + "/notes", headers=AUTH)
    assert status == 200 and json.loads(body)["ideas"] == "a quieter fan\n"


def test_notes_round_trip(launched):
    _start()
    status, _, _ = http("POST", BASE + "/notes/todo", body="buy milk\n", headers=AUTH)
    assert status == 201
    assert Path("/app/data/notes/todo.txt").read_text() == "buy milk\n"
    status, _, body = http("GET", BASE + "/notes", headers=AUTH)
    assert status == 200
    notes = json.loads(body)
    expected = {"groceries": "eggs, flour, coffee\n", "ideas": "a quieter fan\n", "todo": "buy milk\n"}
    assert {name: notes.get(name) for name in expected} == expected


def test_guard_seed_notes_unchanged():
    for path in ("/app/data/notes/groceries.txt", "/app/data/notes/ideas.txt", "/app/secrets/token"):
        assert unchanged(path)
