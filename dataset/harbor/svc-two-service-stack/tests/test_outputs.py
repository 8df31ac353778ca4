import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/services/orders/orders.json': '141c4063d690265653ed73089df324a31f3b16ca52ca204a841117c1a26db080', '/app/services/orders/orders.py': 'e6ef7b8c61eaf2ce1ce63b70298e5d90f4f47fb3f1ed396e98cfa7aba2cbb002', '/app/services/users/users.json': 'd2d5636bf00873aa0677bc339950aa45b296b89d6c1b3dcf331c3e511b5d66da', '/app/services/users/users.py': 'eb8b961fb95fd7b9d4a4e0d885d1f665054c7975ecc4b2558a809ce0bc57c0dc'}


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


def _start():
    result = run("bash", "/app/start_all.sh", timeout=30)
    assert result.returncode == 0, result.stderr


def test_start_all_returns_healthy(launched):
    _start()
    assert http("GET", "http://127.0.0.1:8001/health", timeout=2)[0] == 200
    assert http("GET", "http://127.0.0.1:8002/health", timeout=2)[0] == 200


def test_order_has_customer_name(launched):
    _start()
    status, _, body = http("GET", "http://127.0.0.1:8002/orders/10")
    order = json.loads(body)
    assert status == 200 and order["customer"] == "Bea Lund" and order["total"] == 12.5
    status, _, body = http("GET", "http://127.0.0.1:8002/orders/11")
    assert status == 200 and json.loads(body)["customer"] == "Cem Arslan"


def test_orders_health_follows_users(launched):
    _start()
    users = int(Path("/app/run/users.pid").read_text().strip())
    orders = int(Path("/app/run/orders.pid").read_text().strip())
    assert alive(users) and alive(orders) and users != orders
    os.kill(users, signal.SIGKILL)
    assert wait_closed(8001)
    assert http("GET", "http://127.0.0.1:8002/health")[0] == 503
    assert http("GET", "http://127.0.0.1:8002/orders/10")[0] == 502


def test_stop_all(launched):
    _start()
    assert port_open(8001) and port_open(8002) and cmdlines("users.py") and cmdlines("orders.py")
    result = run("bash", "/app/stop_all.sh", timeout=20)
    assert result.returncode == 0, result.stderr
    assert wait_closed(8001) and wait_closed(8002)
    assert not Path("/app/run/users.pid").exists() and not Path("/app/run/orders.pid").exists()
    assert cmdlines("users.py") == [] and cmdlines("orders.py") == []


def test_guard_data_unchanged():
    assert unchanged("/app/services/users/users.json") and unchanged("/app/services/orders/orders.json")
