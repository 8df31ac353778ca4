import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/kv/PROTOCOL.md': '0e97771e9abff2cced798df72e2a39224e2b7307c1f3b0119643fd41f61200ce', '/app/kv/snapshot.bin': 'ca0b4b4e337a8df976f8ad8ec0aabe8971cf11aad8d3e5b0c4beea8fd337ef38'}


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

import random

PORT = 7379
RECORDS = {'user:001': 'bo-7', 'user:002': 'cy-14', 'user:003': 'di-21', 'user:004': 'ed-28', 'user:005': 'ana-35', 'user:006': 'bo-42', 'user:007': 'cy-49', 'user:008': 'di-56', 'user:009': 'ed-63', 'user:010': 'ana-70', 'user:011': 'bo-77', 'user:012': 'cy-84', 'user:013': 'di-91', 'user:014': 'ed-98', 'user:015': 'ana-4', 'user:016': 'bo-11', 'user:017': 'cy-18', 'user:018': 'di-25', 'user:019': 'ed-32', 'user:020': 'ana-39', 'user:021': 'bo-46', 'user:022': 'cy-53', 'user:023': 'di-60', 'user:024': 'ed-67', 'user:025': 'ana-74', 'user:026': 'bo-81', 'user:027': 'cy-88', 'user:028': 'di-95', 'user:029': 'ed-1', 'user:030': 'ana-8', 'user:031': 'bo-15', 'user:032': 'cy-22', 'user:033': 'di-29', 'user:034': 'ed-36', 'user:035': 'ana-43', 'user:036': 'bo-50', 'user:037': 'cy-57', 'user:038': 'di-64', 'user:039': 'ed-71', 'user:040': 'ana-78', 'user:041': 'bo-85', 'user:042': 'cy-92', 'user:043': 'di-99', 'user:044': 'ed-5', 'user:045': 'ana-12', 'user:046': 'bo-19', 'user:047': 'cy-26', 'motd': 'hello  world, with  spaces', 'city:zurich': 'Zürich', 'empty': ''}


@pytest.fixture(autouse=True)
def fresh_journal():
    Path("/app/kv/journal.log").unlink(missing_ok=True)
    yield


def _start():
    result = run("bash", "/app/kv/start.sh", timeout=15)
    assert result.returncode == 0, result.stderr
    assert wait_port(PORT), "nothing listens on 7379"


class Client:
    def __init__(self):
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        self.reader = self.sock.makefile("rb")

    def ask(self, *lines):
        self.sock.sendall("".join(line + "\n" for line in lines).encode())
        return [self.reader.readline().decode().rstrip("\n") for _ in lines]

    def close(self):
        self.reader.close()
        self.sock.close()


def test_ping_and_snapshot(launched):
    _start()
    client = Client()
    assert client.ask("PING") == ["PONG"]
    assert client.ask("GET motd", "GET city:zurich", "GET user:017", "GET empty") == [
        "VALUE " + RECORDS["motd"], "VALUE Zürich", "VALUE " + RECORDS["user:017"], "VALUE "]
    assert client.ask("COUNT") == [str(len(RECORDS))]
    client.close()


def test_set_get_del(launched):
    _start()
    client = Client()
    assert client.ask("GET nope", "SET color deep  blue", "GET color", "COUNT") == [
        "NOT_FOUND", "OK", "VALUE deep  blue", str(len(RECORDS) + 1)]
    assert client.ask("DEL user:001", "DEL user:001", "GET user:001", "COUNT") == [
        "DELETED", "NOT_FOUND", "NOT_FOUND", str(len(RECORDS))]
    assert client.ask("SET motd bye", "GET motd", "FLY away") == ["OK", "VALUE bye", "ERROR unknown command"]
    client.close()


def test_survives_kill_and_restart(launched):
    _start()
    client = Client()
    assert client.ask("SET fruit kiwi", "SET fruit mango", "DEL motd", "SET note a b c") == ["OK"] * 2 + ["DELETED", "OK"]
    client.close()
    launched.stop()
    assert wait_closed(PORT)
    _start()
    client = Client()
    assert client.ask("GET fruit", "GET motd", "GET note", "GET user:002", "COUNT") == [
        "VALUE mango", "NOT_FOUND", "VALUE a b c", "VALUE " + RECORDS["user:002"], str(len(RECORDS) + 1)]
    client.close()


def test_many_clients_at_once(launched):
    _start()
    idle = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    idle.sendall(b"GET mo")  # a half-sent line must not block anyone else
    errors = []

    def worker(n):
        try:
            client = Client()
            for round_ in range(5):
                value = f"v{n}-{round_}-{random.randint(0, 999)}"
                if client.ask(f"SET key{n} {value}", f"GET key{n}") != ["OK", "VALUE " + value]:
                    errors.append(n)
            client.close()
        except Exception as error:
            errors.append(repr(error))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    start = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert not errors and time.time() - start < 15
    assert Client().ask("COUNT") == [str(len(RECORDS) + 16)]
    idle.close()


def test_guard_snapshot_unchanged():
    assert unchanged("/app/kv/snapshot.bin")
