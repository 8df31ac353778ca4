"""pytest plugin of the terminal-agent verifier for tasks that keep the agent's processes running.

Loaded into the pytest runs of ``tests/test.sh`` (``-p ta_session_gate`` from the verifier runtime's stand-in,
``PYTEST_PLUGINS`` for any other pytest). At the end of the outermost session, before any report is written
(a ``tryfirst`` hook wrapper: before the JUnit and CTRF writers), it asks the verifier runner to freeze the
agent's processes and waits for its answer (they are frozen and the state of the reward files is recorded),
then checks that no process outside its own session runs; when a later session starts it asks the runner to
let them run again. What the verifier writes from then on (the CTRF report, then test.sh's reward) is its own.
The runner decides who asked (the kernel names the peer of its control socket): a request from anyone else is
ignored, and this plugin only asks, so an agent that rewrites it can keep the processes from being frozen,
which leaves the reward untrusted, never trusted.
"""

import os
import socket
import time

import pytest

ACTIVE = "TA_GATE_ACTIVE"
_DEPTH = [0]


def _ask(request, timeout):
    """Send ``request`` to the runner's control socket; whether it answered ``done`` within ``timeout``."""
    path = os.environ.get("TA_GATE_SOCKET")
    if not path:
        return False
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(timeout)
        try:
            connection.connect(path)
            connection.sendall(request + b"\n")
            return connection.recv(16).strip() == b"done"
        finally:
            connection.close()
    except OSError:
        return False


def _outermost(session):
    """Whether this session is the verifier's own (not an xdist worker, a nested or a child pytest)."""
    if hasattr(session.config, "workerinput"):
        return False
    owner = os.environ.get(ACTIVE)
    return owner is None or owner == str(os.getpid())


def _all_frozen(timeout):
    keep = set(int(p) for p in os.environ.get("TA_GATE_KEEP", "").split(",") if p.isdigit()) | {1}
    mine = os.getsid(0)
    deadline = time.monotonic() + timeout
    while True:
        running = False
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in keep:
                continue
            try:
                with open("/proc/%s/stat" % name, "rb") as handle:
                    data = handle.read()
                fields = data[data.rindex(b")") + 2:].split()
            except (OSError, ValueError):
                continue
            if int(fields[3]) != mine and fields[0] not in (b"T", b"t", b"Z", b"X", b"x"):
                running = True
                break
        if not running:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)


def _wait_s():
    return float(os.environ.get("TA_GATE_WAIT_S", "20"))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    if not os.environ.get("TA_GATE_SOCKET") or not _outermost(session):
        return
    _DEPTH[0] += 1
    if _DEPTH[0] == 1:
        os.environ[ACTIVE] = str(os.getpid())
        _ask(b"thaw", _wait_s())


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    # a wrapper: this runs before every plain implementation, ``tryfirst`` ones too (pytest-json-ctrf writes its
    # report in one of those)
    _finish(session)
    yield


def _finish(session):
    if not os.environ.get("TA_GATE_SOCKET") or not _outermost(session) or _DEPTH[0] == 0:
        return
    _DEPTH[0] -= 1
    if _DEPTH[0]:
        return
    os.environ.pop(ACTIVE, None)
    started = time.monotonic()
    if _ask(b"freeze", _wait_s()):
        _all_frozen(max(0.0, _wait_s() - (time.monotonic() - started)))
