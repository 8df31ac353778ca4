import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/proxy/routes.json': '28198bcbe4cbe97eab1e60c04f7d085a6d430d64d5be58fc2e3a434e47647755'}


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

from concurrent.futures import ThreadPoolExecutor


def _backends(*pairs):
    for name, port in pairs:
        subprocess.Popen(["python3", str(Path(__file__).parent / "backend.py"), name, str(port)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _, port in pairs:
        assert wait_port(port, 10)


def _proxy(config, port):
    subprocess.Popen(["python3", "/app/proxy/proxy.py", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_port(port, 8), f"the proxy does not listen on {port}"


def _get(port, path, **kwargs):
    status, headers, body = http(kwargs.pop("method", "GET"), f"http://127.0.0.1:{port}{path}", **kwargs)
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return status, {k.lower(): v for k, v in headers.items()}, data


@pytest.fixture
def shipped(launched):
    _backends(("a", 9101), ("b", 9102), ("c", 9103))
    _proxy("/app/proxy/routes.json", 8080)
    return launched


def test_routes_by_longest_prefix(shipped):
    status, _, data = _get(8080, "/api/users?id=3")
    assert status == 200 and (data["backend"], data["path"]) == ("a", "/users?id=3")
    status, _, data = _get(8080, "/static/css/app.css")
    assert status == 200 and (data["backend"], data["path"]) == ("b", "/static/css/app.css")
    status, _, data = _get(8080, "/api/v2/items/9")
    assert status == 200 and (data["backend"], data["path"]) == ("c", "/api/v2/items/9")


def test_forwards_method_body_and_headers(shipped):
    status, headers, data = _get(8080, "/api/orders?status=201", method="POST", body='{"qty": 2}',
                                 headers={"Content-Type": "application/json", "X-Trace": "t-77"})
    assert status == 201 and headers.get("x-backend") == "a"
    assert (data["method"], data["path"], data["body"]) == ("POST", "/orders?status=201", '{"qty": 2}')
    assert data["headers"]["x-trace"] == "t-77"
    assert data["headers"]["x-forwarded-for"] == "127.0.0.1"
    assert data["headers"]["x-forwarded-prefix"] == "/api/"
    status, headers, data = _get(8080, "/static/missing?status=404")
    assert status == 404 and data["backend"] == "b"


def test_unknown_route_and_dead_backend(launched, tmp_path):
    _backends(("a", 9201))
    config = tmp_path / "routes.json"
    config.write_text(json.dumps({"listen": 8191, "routes": [
        {"prefix": "/up/", "backend": "http://127.0.0.1:9201", "strip_prefix": True},
        {"prefix": "/down/", "backend": "http://127.0.0.1:9299", "strip_prefix": True}]}))
    _proxy(str(config), 8191)
    status, _, data = _get(8191, "/up/x")
    assert status == 200 and data["path"] == "/x"
    assert _get(8191, "/nowhere")[0] == 404
    assert _get(8191, "/down/x")[0] == 502
    assert _get(8191, "/up/again")[0] == 200


def test_reads_the_config_it_is_given(launched, tmp_path):
    _backends(("x", 9211), ("y", 9212))
    config = tmp_path / "other.json"
    config.write_text(json.dumps({"listen": 8192, "routes": [
        {"prefix": "/", "backend": "http://127.0.0.1:9211", "strip_prefix": False},
        {"prefix": "/y/", "backend": "http://127.0.0.1:9212", "strip_prefix": True}]}))
    _proxy(str(config), 8192)
    assert not port_open(8080)
    assert _get(8192, "/y/deep/path")[2]["path"] == "/deep/path"
    assert _get(8192, "/yy")[2]["backend"] == "x"


def test_serves_requests_concurrently(shipped):
    start = time.time()
    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(lambda n: _get(8080, f"/api/slow/{n}?delay=0.6"), range(10)))
    assert [a[2]["path"] for a in answers] == [f"/slow/{n}?delay=0.6" for n in range(10)]
    assert time.time() - start < 3.5


def test_guard_routes_unchanged():
    assert unchanged("/app/proxy/routes.json")
