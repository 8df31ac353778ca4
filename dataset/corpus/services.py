"""Small services to start and configure, with a health check.

Every agent process is killed before grading, so each test starts the service the way the task says (the
agent's start script, control script or program), waits for its health check with a timeout, talks to it, and
kills every process it started in a ``finally`` (any process that was not there before the test began).
"""

from __future__ import annotations

import struct

from _spec import Spec

_SERVICE_HELPERS = '''
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
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\\0", b" ").decode()
        except OSError:
            continue
        if word in line and pid != os.getpid() and alive(pid):
            found.append(pid)
    return found
'''

# ---------------------------------------------------------------------------------------------------------------
# svc-notes-http-config
# ---------------------------------------------------------------------------------------------------------------

_NOTES_APP = '''"""Notes service: a tiny JSON API over a directory of text notes.

    python3 app.py CONFIG.ini

CONFIG.ini:
    [server]   host, port
    [storage]  data_dir   (one NAME.txt file per note)
    [auth]     token_file (a file holding the bearer token; every /notes request needs it)

GET /health -> {"status": "ok"}; GET /notes -> {name: text}; POST /notes/NAME (body: the text) -> 201.
"""
import configparser
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

config = configparser.ConfigParser()
if not config.read(sys.argv[1]):
    sys.exit(f"cannot read config {sys.argv[1]}")
DATA_DIR = config["storage"]["data_dir"]
with open(config["auth"]["token_file"]) as handle:
    TOKEN = handle.read().strip()


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, payload):
        body = json.dumps(payload, sort_keys=True).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _authorized(self):
        return self.headers.get("Authorization", "") == f"Bearer {TOKEN}"

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {"status": "ok"})
        if self.path != "/notes":
            return self._send(404, {"error": "not found"})
        if not self._authorized():
            return self._send(401, {"error": "unauthorized"})
        notes = {}
        for name in sorted(os.listdir(DATA_DIR)):
            if name.endswith(".txt"):
                with open(name) as handle:
                    notes[name[:-4]] = handle.read()
        return self._send(200, notes)

    def do_POST(self):
        match = re.fullmatch(r"/notes/([a-z0-9_-]+)", self.path)
        if not match:
            return self._send(404, {"error": "not found"})
        if not self._authorized():
            return self._send(401, {"error": "unauthorized"})
        text = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        with open(os.path.join(DATA_DIR, match.group(1) + ".txt"), "w") as handle:
            handle.write(text)
        return self._send(201, {"saved": match.group(1)})

    def log_message(self, *args):
        pass


ThreadingHTTPServer((config["server"]["host"], config["server"]["port"]), Handler).serve_forever()
'''
_NOTES_EXAMPLE = """# Example configuration (not used by anything yet).
[http]
listen = 0.0.0.0:8000

[storage]
data_dir = ./notes
"""
_NOTES_TOKEN = "n0tes-7f3a9c-corpus\n"
_NOTES_SEED = {"data/notes/groceries.txt": "eggs, flour, coffee\n", "data/notes/ideas.txt": "a quieter fan\n"}

_NOTES_TESTS = _SERVICE_HELPERS + '''
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
    assert status == 200 and json.loads(body)["ideas"] == "a quieter fan\\n"


def test_notes_round_trip(launched):
    _start()
    status, _, _ = http("POST", BASE + "/notes/todo", body="buy milk\\n", headers=AUTH)
    assert status == 201
    assert Path("/app/data/notes/todo.txt").read_text() == "buy milk\\n"
    status, _, body = http("GET", BASE + "/notes", headers=AUTH)
    assert status == 200
    notes = json.loads(body)
    expected = {"groceries": "eggs, flour, coffee\\n", "ideas": "a quieter fan\\n", "todo": "buy milk\\n"}
    assert {name: notes.get(name) for name in expected} == expected


def test_guard_seed_notes_unchanged():
    for path in ("/app/data/notes/groceries.txt", "/app/data/notes/ideas.txt", "/app/secrets/token"):
        assert unchanged(path)
'''

_NOTES_SOLUTION = r'''cd /app/notes_service
python3 - <<'EOF'
from pathlib import Path
path = Path("app.py")
text = path.read_text()
text = text.replace("with open(name) as handle:", "with open(os.path.join(DATA_DIR, name)) as handle:")
text = text.replace('config["server"]["port"]), Handler)', 'int(config["server"]["port"])), Handler)')
path.write_text(text)
EOF
cat > service.ini <<'EOF'
[server]
host = 127.0.0.1
port = 8088

[storage]
data_dir = /app/data/notes

[auth]
token_file = /app/secrets/token
EOF
cat > /app/start.sh <<'EOF'
#!/bin/bash
# Start the notes service in the background and wait until it answers its health check.
mkdir -p /app/run
nohup python3 /app/notes_service/app.py /app/notes_service/service.ini > /app/run/notes.log 2>&1 &
echo $! > /app/run/notes.pid
for _ in $(seq 50); do
  curl -fs http://127.0.0.1:8088/health > /dev/null && exit 0
  sleep 0.1
done
echo "notes service did not come up" >&2
exit 1
EOF
chmod +x /app/start.sh
bash /app/start.sh && curl -s http://127.0.0.1:8088/health
'''

# ---------------------------------------------------------------------------------------------------------------
# svc-kv-tcp-server (held out, binary fixture)
# ---------------------------------------------------------------------------------------------------------------


def _snapshot() -> tuple[bytes, dict[str, str]]:
    records = {f"user:{n:03d}": f"{['ana', 'bo', 'cy', 'di', 'ed'][n % 5]}-{n * 7 % 101}" for n in range(1, 48)}
    records["motd"] = "hello  world, with  spaces"
    records["city:zurich"] = "Zürich"
    records["empty"] = ""
    out = bytearray(b"KVS1" + struct.pack(">I", len(records)))
    for key, value in records.items():
        k, v = key.encode(), value.encode()
        out += struct.pack(">H", len(k)) + k + struct.pack(">I", len(v)) + v
    return bytes(out), records


_SNAPSHOT, _SNAPSHOT_RECORDS = _snapshot()
_PROTOCOL = """# kv: a line-based key-value server

Listen on TCP 127.0.0.1:7379. A client sends commands, one per line (UTF-8, ending in `\\n`), and gets one
reply line per command, in order, on the same connection. Many clients may be connected at once; one slow or
idle client must not hold up the others.

| command            | reply                                              |
|--------------------|----------------------------------------------------|
| `PING`             | `PONG`                                             |
| `GET key`          | `VALUE <value>` (the value may be empty), or `NOT_FOUND` |
| `SET key value...` | `OK` (the value is the rest of the line, spaces kept) |
| `DEL key`          | `DELETED`, or `NOT_FOUND`                          |
| `COUNT`            | the number of keys, as a decimal number            |
| anything else      | `ERROR unknown command`                            |

Keys never contain spaces.

## Start-up state

1. Load `/app/kv/snapshot.bin` (read-only, never rewritten):
   - 4 bytes magic `KVS1`;
   - unsigned 32-bit big-endian record count;
   - per record: unsigned 16-bit big-endian key length, the key (UTF-8), unsigned 32-bit big-endian value
     length, the value (UTF-8).
2. Replay `/app/kv/journal.log` if it exists: one line per change, `SET key value...` or `DEL key`, applied in
   order.

Every SET and DEL that changes something is appended to the journal and flushed before the reply is sent, so
the data survives a crash (kill -9) and a restart.
"""

_KV_TESTS = _SERVICE_HELPERS + f'''
import random

PORT = 7379
RECORDS = {_SNAPSHOT_RECORDS!r}


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
        self.sock.sendall("".join(line + "\\n" for line in lines).encode())
        return [self.reader.readline().decode().rstrip("\\n") for _ in lines]

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
                value = f"v{{n}}-{{round_}}-{{random.randint(0, 999)}}"
                if client.ask(f"SET key{{n}} {{value}}", f"GET key{{n}}") != ["OK", "VALUE " + value]:
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
'''

_KV_SERVER = r'''"""Line-based key-value server (see PROTOCOL.md)."""
import os
import socketserver
import struct
import threading

SNAPSHOT = "/app/kv/snapshot.bin"
JOURNAL = "/app/kv/journal.log"
store = {}
lock = threading.Lock()


def load_snapshot(path):
    data = open(path, "rb").read()
    if data[:4] != b"KVS1":
        raise SystemExit("bad snapshot magic")
    (count,) = struct.unpack_from(">I", data, 4)
    offset = 8
    for _ in range(count):
        (klen,) = struct.unpack_from(">H", data, offset)
        offset += 2
        key = data[offset:offset + klen].decode()
        offset += klen
        (vlen,) = struct.unpack_from(">I", data, offset)
        offset += 4
        store[key] = data[offset:offset + vlen].decode()
        offset += vlen


def apply(line):
    command, _, rest = line.partition(" ")
    if command == "SET":
        key, _, value = rest.partition(" ")
        store[key] = value
    elif command == "DEL":
        store.pop(rest, None)


load_snapshot(SNAPSHOT)
if os.path.exists(JOURNAL):
    with open(JOURNAL, encoding="utf-8") as handle:
        for line in handle:
            apply(line.rstrip("\n"))
journal = open(JOURNAL, "a", encoding="utf-8")


def record(line):
    journal.write(line + "\n")
    journal.flush()
    os.fsync(journal.fileno())


def answer(line):
    command, _, rest = line.partition(" ")
    with lock:
        if command == "PING":
            return "PONG"
        if command == "COUNT":
            return str(len(store))
        if command == "GET" and rest:
            return "VALUE " + store[rest] if rest in store else "NOT_FOUND"
        if command == "SET" and rest:
            key, _, value = rest.partition(" ")
            record(f"SET {key} {value}")
            store[key] = value
            return "OK"
        if command == "DEL" and rest:
            if rest not in store:
                return "NOT_FOUND"
            record(f"DEL {rest}")
            del store[rest]
            return "DELETED"
    return "ERROR unknown command"


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for raw in self.rfile:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.wfile.write((answer(line) + "\n").encode())
            self.wfile.flush()


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


Server(("127.0.0.1", 7379), Handler).serve_forever()
'''

_KV_SOLUTION = (r'''mkdir -p /app/kv
cat > /app/kv/server.py <<'EOF'
''' + _KV_SERVER + r'''EOF
cat > /app/kv/start.sh <<'EOF'
#!/bin/bash
nohup python3 /app/kv/server.py > /tmp/kv.log 2>&1 &
for _ in $(seq 50); do
  (exec 3<>/dev/tcp/127.0.0.1/7379) 2>/dev/null && exit 0
  sleep 0.1
done
exit 1
EOF
chmod +x /app/kv/start.sh
bash /app/kv/start.sh
''')

# ---------------------------------------------------------------------------------------------------------------
# svc-worker-control-script
# ---------------------------------------------------------------------------------------------------------------

_WORKER = '''"""Queue worker: sums the numbers of each job file.

    python3 worker.py --queue /app/queue --log /app/logs/worker.log

Every 0.2 s it takes each QUEUE/incoming/NAME.job (whitespace-separated integers), writes the sum to
QUEUE/done/NAME.result, deletes the job and logs one line. It runs in the foreground until it is killed.
"""
import argparse
import os
import time

parser = argparse.ArgumentParser()
parser.add_argument("--queue", required=True)
parser.add_argument("--log", required=True)
args = parser.parse_args()
incoming = os.path.join(args.queue, "incoming")
done = os.path.join(args.queue, "done")
os.makedirs(incoming, exist_ok=True)
os.makedirs(done, exist_ok=True)
log = open(args.log, "a")


def say(text):
    log.write(time.strftime("%Y-%m-%dT%H:%M:%S ") + text + "\\n")
    log.flush()


say(f"worker {os.getpid()} started")
while True:
    for name in sorted(os.listdir(incoming)):
        if not name.endswith(".job"):
            continue
        path = os.path.join(incoming, name)
        with open(path) as handle:
            total = sum(int(word) for word in handle.read().split())
        with open(os.path.join(done, name[:-4] + ".result"), "w") as handle:
            handle.write(f"{total}\\n")
        os.remove(path)
        say(f"processed {name[:-4]} sum={total}")
    time.sleep(0.2)
'''

_WORKER_TESTS = _SERVICE_HELPERS + '''
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
    tmp.write_text(" ".join(map(str, numbers)) + "\\n")
    tmp.rename(QUEUE / "incoming" / f"{name}.job")


def _result(name, timeout=10):
    path = QUEUE / "done" / f"{name}.result"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and path.read_text().endswith("\\n"):
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
    PIDFILE.write_text(f"{dead.pid}\\n")
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
'''

_WORKER_SOLUTION = r'''cd /app/worker
python3 - <<'EOF'
from pathlib import Path
path = Path("worker.py")
text = path.read_text()
text = text.replace("import argparse\n", "import argparse\nimport signal\n")
text = text.replace("""say(f"worker {os.getpid()} started")""", """

def reopen(signum, frame):
    global log
    log.close()
    log = open(args.log, "a")
    say("log reopened")


def finish(signum, frame):
    say("worker stopping")
    raise SystemExit(0)


signal.signal(signal.SIGHUP, reopen)
signal.signal(signal.SIGTERM, finish)
say(f"worker {os.getpid()} started")""")
path.write_text(text)
EOF
cat > /app/worker/ctl.sh <<'EOF'
#!/bin/bash
# Control the queue worker: start | stop | status | rotate
PIDFILE=/app/run/worker.pid
LOG=/app/logs/worker.log

running() {
  [ -f "$PIDFILE" ] || return 1
  pid=$(cat "$PIDFILE" 2>/dev/null)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q worker.py "/proc/$pid/cmdline" 2>/dev/null
}

case "$1" in
  start)
    if running; then echo "already running ($pid)"; exit 1; fi
    mkdir -p /app/run /app/logs
    nohup python3 /app/worker/worker.py --queue /app/queue --log "$LOG" < /dev/null > /dev/null 2>&1 &
    echo $! > "$PIDFILE"
    sleep 0.3
    running || { echo "worker failed to start"; rm -f "$PIDFILE"; exit 1; }
    echo "started $(cat "$PIDFILE")" ;;
  stop)
    if ! running; then rm -f "$PIDFILE"; echo "not running"; exit 0; fi
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    rm -f "$PIDFILE"; echo "stopped" ;;
  status)
    if running; then echo "running $pid"; exit 0; fi
    echo "stopped"; exit 3 ;;
  rotate)
    rm -f "$LOG.3"
    [ -f "$LOG.2" ] && mv "$LOG.2" "$LOG.3"
    [ -f "$LOG.1" ] && mv "$LOG.1" "$LOG.2"
    [ -f "$LOG" ] && mv "$LOG" "$LOG.1"
    if running; then kill -HUP "$pid"; fi
    sleep 0.2 ;;
  *) echo "usage: $0 start|stop|status|rotate" >&2; exit 2 ;;
esac
EOF
chmod +x /app/worker/ctl.sh
bash /app/worker/ctl.sh start && bash /app/worker/ctl.sh status && bash /app/worker/ctl.sh stop
'''

# ---------------------------------------------------------------------------------------------------------------
# svc-http-path-router (held out)
# ---------------------------------------------------------------------------------------------------------------

_ROUTES = """{
  "listen": 8080,
  "routes": [
    {"prefix": "/api/", "backend": "http://127.0.0.1:9101", "strip_prefix": true},
    {"prefix": "/api/v2/", "backend": "http://127.0.0.1:9103", "strip_prefix": false},
    {"prefix": "/static/", "backend": "http://127.0.0.1:9102", "strip_prefix": false}
  ]
}
"""
_BACKEND = '''"""Test backend: answers every request with JSON describing it (name, method, path, headers, body)."""
import json
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAME, PORT = sys.argv[1], int(sys.argv[2])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        time.sleep(float(query.get("delay", ["0"])[0]))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        payload = json.dumps({"backend": NAME, "method": self.command, "path": self.path,
                              "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}).encode()
        self.send_response(int(query.get("status", ["200"])[0]))
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Backend", NAME)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
'''

_ROUTER_TESTS = _SERVICE_HELPERS + '''
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
'''

_PROXY = r'''"""Path-prefix HTTP reverse proxy.  python3 proxy.py ROUTES.json"""
import http.client
import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

config = json.load(open(sys.argv[1]))
ROUTES = sorted(config["routes"], key=lambda route: len(route["prefix"]), reverse=True)
HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host",
       "content-length"}


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _reply(self, status, body, headers=()):
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _forward(self):
        route = next((r for r in ROUTES if self.path.startswith(r["prefix"])), None)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if route is None:
            return self._reply(404, b"no route\n")
        path = self.path
        if route.get("strip_prefix"):
            path = "/" + path[len(route["prefix"]):]
        target = urllib.parse.urlsplit(route["backend"])
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        headers["X-Forwarded-For"] = self.client_address[0]
        headers["X-Forwarded-Prefix"] = route["prefix"]
        try:
            connection = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
            connection.request(self.command, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
            connection.close()
        except OSError:
            return self._reply(502, b"bad gateway\n")
        self._reply(response.status, data, [(k, v) for k, v in response.getheaders() if k.lower() not in HOP])

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _forward

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(config["listen"])), Proxy).serve_forever()
'''

_ROUTER_SOLUTION = "mkdir -p /app/proxy\ncat > /app/proxy/proxy.py <<'EOF'\n" + _PROXY + "EOF\n"

# ---------------------------------------------------------------------------------------------------------------
# svc-cron-scheduler (held out)
# ---------------------------------------------------------------------------------------------------------------

_SCHEDULER = '''"""A small cron: run the jobs of a jobs file that are due at a minute.

    python3 scheduler.py --jobs JOBS --state STATE_DIR [--once --now YYYY-MM-DDTHH:MM]

JOBS: one job per line, `NAME MINUTE HOUR DAY_OF_MONTH MONTH DAY_OF_WEEK COMMAND...`; blank lines and lines
starting with # are ignored. Without --once it runs forever, once per minute of the wall clock.
Each due job runs as `sh -c COMMAND` with SCHED_TIME=YYYY-MM-DDTHH:MM and SCHED_JOB=NAME in its environment.
"""
import argparse
import datetime as dt
import os
import subprocess
import time

LIMITS = {"minute": (0, 59), "hour": (0, 23), "dom": (1, 31), "month": (1, 12), "dow": (0, 6)}


def field_matches(spec, value, kind):
    if spec == "*":
        return True
    if spec.startswith("*/"):
        return value % int(spec[2:]) == 0
    return int(spec) == value


def due(job, when):
    minute, hour, dom, month, dow = job["fields"]
    return (field_matches(minute, when.minute, "minute") and field_matches(hour, when.hour, "hour")
            and field_matches(dom, when.day, "dom") and field_matches(month, when.month, "month")
            and field_matches(dow, when.weekday(), "dow"))


def read_jobs(path):
    jobs = []
    for line in open(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 6)
        jobs.append({"name": parts[0], "fields": parts[1:6], "command": parts[6].strip()})
    return jobs


def run_minute(jobs, when, state):
    stamp = when.strftime("%Y-%m-%dT%H:%M")
    for job in jobs:
        if due(job, when):
            env = dict(os.environ, SCHED_TIME=stamp, SCHED_JOB=job["name"])
            subprocess.run(["sh", "-c", job["command"]], env=env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--once", action="store_true")
    parser.add_argument("--now")
    args = parser.parse_args()
    os.makedirs(args.state, exist_ok=True)
    if args.once:
        when = dt.datetime.strptime(args.now, "%Y-%m-%dT%H:%M") if args.now else dt.datetime.now()
        run_minute(read_jobs(args.jobs), when.replace(second=0, microsecond=0), args.state)
        return
    while True:
        now = dt.datetime.now().replace(second=0, microsecond=0)
        run_minute(read_jobs(args.jobs), now, args.state)
        time.sleep(60 - dt.datetime.now().second)


if __name__ == "__main__":
    main()
'''

_SCHED_TESTS = '''
SCHED = "/app/sched/scheduler.py"


def _run(tmp_path, jobs, *times):
    jobs_file = tmp_path / "jobs"
    out = tmp_path / "ran.txt"
    lines = [f"{name} {spec} echo $SCHED_JOB $SCHED_TIME >> {out}" for name, spec in jobs]
    jobs_file.write_text("# test jobs\\n\\n" + "\\n".join(lines) + "\\n")
    for when in times:
        result = run("python3", SCHED, "--jobs", str(jobs_file), "--state", str(tmp_path / "state"), "--once",
                     "--now", when, timeout=30)
        assert result.returncode == 0, result.stderr
    return out.read_text().splitlines() if out.exists() else []


def _names(lines, when):
    return sorted(line.split()[0] for line in lines if line.split()[1] == when)


def test_steps_and_lists(tmp_path):
    jobs = [("every15", "*/15 * * * *"), ("pair", "5,35 * * * *"), ("odd_days", "0 12 */2 * *"),
            ("list_step", "0 1,13 * * *"), ("plain", "30 9 * * *")]
    times = ["2026-03-02T12:00", "2026-03-03T12:00", "2026-03-03T13:00", "2026-03-03T09:30", "2026-03-03T10:35",
             "2026-03-05T01:00"]
    lines = _run(tmp_path, jobs, *times)
    assert _names(lines, "2026-03-02T12:00") == ["every15"]
    assert _names(lines, "2026-03-03T12:00") == ["every15", "odd_days"]
    assert _names(lines, "2026-03-03T13:00") == ["every15", "list_step"]
    assert _names(lines, "2026-03-03T09:30") == ["every15", "plain"]
    assert _names(lines, "2026-03-03T10:35") == ["pair"]
    assert _names(lines, "2026-03-05T01:00") == ["every15", "list_step"]


def test_ranges_and_weekdays(tmp_path):
    jobs = [("workdays", "0 8 * * 1-5"), ("sunday7", "0 8 * * 7"), ("sunday0", "0 8 * * 0"),
            ("office", "*/30 9-17/4 * * *"), ("summer", "0 8 * 6-8 *")]
    times = ["2026-03-01T08:00", "2026-03-02T08:00", "2026-03-07T08:00", "2026-03-02T13:30", "2026-03-02T11:00",
             "2026-07-05T08:00"]
    lines = _run(tmp_path, jobs, *times)
    assert _names(lines, "2026-03-01T08:00") == ["sunday0", "sunday7"]
    assert _names(lines, "2026-03-02T08:00") == ["workdays"]
    assert _names(lines, "2026-03-07T08:00") == []
    assert _names(lines, "2026-03-02T13:30") == ["office"]
    assert _names(lines, "2026-03-02T11:00") == []
    assert _names(lines, "2026-07-05T08:00") == ["summer", "sunday0", "sunday7"]


def test_day_of_month_or_weekday(tmp_path):
    jobs = [("either", "0 0 1,15 * 5"), ("dom_only", "0 0 13 * *")]
    lines = _run(tmp_path, jobs, "2026-03-13T00:00", "2026-03-15T00:00", "2026-03-14T00:00", "2026-03-20T00:00")
    assert _names(lines, "2026-03-13T00:00") == ["dom_only", "either"]
    assert _names(lines, "2026-03-15T00:00") == ["either"]
    assert _names(lines, "2026-03-14T00:00") == []
    assert _names(lines, "2026-03-20T00:00") == ["either"]


def test_a_minute_runs_once(tmp_path):
    jobs = [("tick", "*/5 * * * *"), ("hourly", "0 * * * *")]
    lines = _run(tmp_path, jobs, "2026-03-02T10:00", "2026-03-02T10:00", "2026-03-02T10:05", "2026-03-02T10:00",
                 "2026-03-02T10:05", "2026-03-02T11:00")
    assert lines == ["tick 2026-03-02T10:00", "hourly 2026-03-02T10:00", "tick 2026-03-02T10:05",
                     "tick 2026-03-02T11:00", "hourly 2026-03-02T11:00"]


def test_rejects_bad_fields(tmp_path):
    jobs_file = tmp_path / "jobs"
    for spec in ("61 * * * *", "* 24 * * *", "* * 0 * *", "*/0 * * * *", "5-2 * * * *", "* * * 13 *", "* * * * 8"):
        jobs_file.write_text(f"bad {spec} echo no >> {tmp_path}/bad.txt\\n")
        result = run("python3", SCHED, "--jobs", str(jobs_file), "--state", str(tmp_path / "state"), "--once",
                     "--now", "2026-03-02T10:00")
        assert result.returncode != 0 and "bad" in result.stderr, spec
    assert not (tmp_path / "bad.txt").exists()
    jobs_file.write_text(f"good 0 10 * * * echo yes >> {tmp_path}/good.txt\\n")
    result = run("python3", SCHED, "--jobs", str(jobs_file), "--state", str(tmp_path / "state2"), "--once",
                 "--now", "2026-03-02T10:00")
    assert result.returncode == 0 and (tmp_path / "good.txt").read_text() == "yes\\n"
'''

_SCHED_FIXED = _SCHEDULER.replace('''def field_matches(spec, value, kind):
    if spec == "*":
        return True
    if spec.startswith("*/"):
        return value % int(spec[2:]) == 0
    return int(spec) == value


def due(job, when):
    minute, hour, dom, month, dow = job["fields"]
    return (field_matches(minute, when.minute, "minute") and field_matches(hour, when.hour, "hour")
            and field_matches(dom, when.day, "dom") and field_matches(month, when.month, "month")
            and field_matches(dow, when.weekday(), "dow"))
''', '''def expand(spec, kind):
    """The set of values a field allows; ValueError naming the job field when it is bad."""
    low, high = LIMITS[kind]
    top = 7 if kind == "dow" else high
    values = set()
    for part in spec.split(","):
        base, _, step = part.partition("/")
        step = int(step) if step else 1
        if step < 1:
            raise ValueError(f"bad step in {spec!r}")
        if base == "*":
            start, end = low, high
        elif "-" in base:
            start, end = (int(x) for x in base.split("-", 1))
        else:
            start = end = int(base)
            if step != 1:
                end = top
        if not (low <= start <= end <= top):
            raise ValueError(f"bad {kind} field {spec!r}")
        values.update(range(start, end + 1, step))
    if kind == "dow" and 7 in values:
        values = (values - {7}) | {0}
    return values


def field_matches(spec, value, kind):
    return value in expand(spec, kind)


def due(job, when):
    minute, hour, dom, month, dow = job["fields"]
    cron_dow = (when.weekday() + 1) % 7
    day_ok = field_matches(dom, when.day, "dom")
    week_ok = field_matches(dow, cron_dow, "dow")
    if dom != "*" and dow != "*":
        day = day_ok or week_ok
    else:
        day = day_ok and week_ok
    return (field_matches(minute, when.minute, "minute") and field_matches(hour, when.hour, "hour")
            and field_matches(month, when.month, "month") and day)
''').replace('''        parts = line.split(None, 6)
        jobs.append({"name": parts[0], "fields": parts[1:6], "command": parts[6].strip()})
    return jobs
''', '''        parts = line.split(None, 6)
        job = {"name": parts[0], "fields": parts[1:6], "command": parts[6].strip()}
        for spec, kind in zip(job["fields"], LIMITS):
            try:
                expand(spec, kind)
            except ValueError as error:
                raise SystemExit(f"bad job {job['name']}: {error}")
        jobs.append(job)
    return jobs
''').replace('''    stamp = when.strftime("%Y-%m-%dT%H:%M")
    for job in jobs:''', '''    stamp = when.strftime("%Y-%m-%dT%H:%M")
    done = os.path.join(state, "done")
    seen = set(open(done).read().split()) if os.path.exists(done) else set()
    if stamp in seen:
        return
    with open(done, "a") as handle:
        handle.write(stamp + "\\n")
    for job in jobs:''')

_SCHED_SOLUTION = "cat > /app/sched/scheduler.py <<'EOF'\n" + _SCHED_FIXED + "EOF\n"

# ---------------------------------------------------------------------------------------------------------------
# svc-two-service-stack
# ---------------------------------------------------------------------------------------------------------------

_USERS = '''"""users service: GET /health, GET /users/ID -> {"id", "name"}. Port: $USERS_PORT (default 8000)."""
import json
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USERS = json.load(open(os.path.join(os.path.dirname(__file__), "users.json")))


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            return self._send(200, {"status": "ok"})
        match = re.fullmatch(r"/users/(\\d+)", self.path)
        if match and match.group(1) in USERS:
            return self._send(200, {"id": int(match.group(1)), "name": USERS[match.group(1)]})
        return self._send(404, {"error": "not found"})

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("USERS_PORT", "8000"))), Handler).serve_forever()
'''
_ORDERS = '''"""orders service: GET /health (503 while users cannot be reached), GET /orders/ID -> the order with its
customer's name. Port: $ORDERS_PORT (default 8000). Users service: $USERS_URL (default http://127.0.0.1:8000)."""
import json
import os
import re
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ORDERS = json.load(open(os.path.join(os.path.dirname(__file__), "orders.json")))
USERS_URL = os.environ.get("USERS_URL", "http://127.0.0.1:8000")


def fetch(path):
    with urllib.request.urlopen(USERS_URL + path, timeout=2) as response:
        return json.loads(response.read())


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            try:
                fetch("/health")
            except OSError:
                return self._send(503, {"status": "users unreachable"})
            return self._send(200, {"status": "ok"})
        match = re.fullmatch(r"/orders/(\\d+)", self.path)
        if not match or match.group(1) not in ORDERS:
            return self._send(404, {"error": "not found"})
        order = dict(ORDERS[match.group(1)])
        try:
            order["customer"] = fetch(f"/user/{order['user_id']}")["name"]
        except OSError:
            return self._send(502, {"error": "users unreachable"})
        order["total"] = sum(line["price"] * line["qty"] for line in order["lines"])
        return self._send(200, order)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("ORDERS_PORT", "8000"))), Handler).serve_forever()
'''
_USERS_JSON = '{"1": "Ari Koski", "2": "Bea Lund", "3": "Cem Arslan"}\n'
_ORDERS_JSON = ('{"10": {"user_id": 2, "lines": [{"sku": "pen", "price": 1.5, "qty": 4}, {"sku": "pad", "price": 3.25, '
                '"qty": 2}]},\n "11": {"user_id": 3, "lines": [{"sku": "ink", "price": 7.0, "qty": 1}]}}\n')

_STACK_TESTS = _SERVICE_HELPERS + '''

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
'''

_STACK_SOLUTION = r'''sed -i 's|fetch(f"/user/{order|fetch(f"/users/{order|' /app/services/orders/orders.py
cat > /app/start_all.sh <<'EOF'
#!/bin/bash
# Start users (8001) and orders (8002); return once both answer their health checks.
mkdir -p /app/run
USERS_PORT=8001 nohup python3 /app/services/users/users.py > /app/run/users.log 2>&1 &
echo $! > /app/run/users.pid
ORDERS_PORT=8002 USERS_URL=http://127.0.0.1:8001 nohup python3 /app/services/orders/orders.py > /app/run/orders.log 2>&1 &
echo $! > /app/run/orders.pid
for _ in $(seq 100); do
  if curl -fs http://127.0.0.1:8001/health >/dev/null && curl -fs http://127.0.0.1:8002/health >/dev/null; then
    exit 0
  fi
  sleep 0.1
done
echo "services did not become healthy" >&2
exit 1
EOF
cat > /app/stop_all.sh <<'EOF'
#!/bin/bash
for name in orders users; do
  pidfile=/app/run/$name.pid
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$pidfile"
  fi
done
exit 0
EOF
chmod +x /app/start_all.sh /app/stop_all.sh
bash /app/start_all.sh && curl -s http://127.0.0.1:8002/orders/10 && bash /app/stop_all.sh
'''

# ---------------------------------------------------------------------------------------------------------------
# svc-process-supervisor
# ---------------------------------------------------------------------------------------------------------------

_SUPER_TESTS = _SERVICE_HELPERS + '''

def _write_config(tmp_path, programs):
    status = tmp_path / "status.json"
    lines = ["[supervisor]", f"status_file = {status}", ""]
    for name, options in programs.items():
        lines.append(f"[program:{name}]")
        lines += [f"{key} = {value}" for key, value in options.items()]
        lines.append("")
    config = tmp_path / "programs.ini"
    config.write_text("\\n".join(lines))
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
'''

_SUPERVISOR = r'''"""Process supervisor.  python3 supervise.py PROGRAMS.ini"""
import configparser
import json
import os
import shlex
import signal
import subprocess
import sys
import time

config = configparser.ConfigParser()
config.read(sys.argv[1])
STATUS = config["supervisor"]["status_file"]
programs = {}
for section in config.sections():
    if not section.startswith("program:"):
        continue
    options = config[section]
    programs[section.split(":", 1)[1]] = {
        "command": options["command"], "restart": options.get("restart", "always"),
        "max_restarts": int(options.get("max_restarts", "3")), "backoff_s": float(options.get("backoff_s", "1")),
        "proc": None, "state": "STARTING", "pid": None, "restarts": 0, "exit_code": None, "due": 0.0}
stopping = False


def write_status():
    data = {name: {key: p[key] for key in ("state", "pid", "restarts", "exit_code")} for name, p in programs.items()}
    tmp = STATUS + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(data, handle, indent=2)
    os.replace(tmp, STATUS)


def launch(p):
    p["proc"] = subprocess.Popen(shlex.split(p["command"]), start_new_session=True)
    p["pid"], p["state"] = p["proc"].pid, "RUNNING"


def stop(signum, frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
for p in programs.values():
    launch(p)
write_status()
while not stopping:
    changed = False
    now = time.time()
    for p in programs.values():
        if p["state"] == "RUNNING" and p["proc"].poll() is not None:
            p["exit_code"] = p["proc"].returncode
            retry = p["restart"] == "always" or (p["restart"] == "on-failure" and p["exit_code"] != 0)
            if p["restart"] == "never" or not retry:
                p["state"] = "EXITED"
            elif p["restarts"] >= p["max_restarts"]:
                p["state"] = "FATAL"
            else:
                p["state"], p["due"] = "BACKOFF", now + p["backoff_s"]
            changed = True
        elif p["state"] == "BACKOFF" and now >= p["due"]:
            p["restarts"] += 1
            launch(p)
            changed = True
    if changed:
        write_status()
    time.sleep(0.05)
for p in programs.values():
    if p["state"] == "RUNNING" and p["proc"].poll() is None:
        p["proc"].terminate()
deadline = time.time() + 5
for p in programs.values():
    if p["proc"] is not None and p["proc"].poll() is None:
        try:
            p["proc"].wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p["proc"].kill()
            p["proc"].wait()
    if p["state"] in ("RUNNING", "BACKOFF"):
        p["state"] = "STOPPED"
write_status()
sys.exit(0)
'''

_SUPER_SOLUTION = "mkdir -p /app/super\ncat > /app/super/supervise.py <<'EOF'\n" + _SUPERVISOR + "EOF\n"

_SERVICE_LIMITS = {"agent_timeout_s": 900, "test_timeout_s": 240}

TASKS = [
    Spec(
        task_id="svc-notes-http-config",
        title="Configure, fix and start the notes HTTP service",
        difficulty="medium",
        category="services",
        instruction="""
/app/notes_service/app.py is a small JSON notes API (read its docstring). It has never been run here and it
does not work yet. Make it run as a service:

- write its configuration to /app/notes_service/service.ini: listen on 127.0.0.1 port 8088, keep the notes in
  /app/data/notes (the two notes already there must be served), and take the bearer token from
  /app/secrets/token;
- write /app/start.sh: it starts the service in the background with that configuration, writes the server's
  pid to /app/run/notes.pid, and returns (exit 0) once `GET /health` answers;
- fix whatever in app.py keeps it from starting or serving the notes.

Listing and saving notes must work: `GET /notes` and `POST /notes/NAME` with `Authorization: Bearer TOKEN`, and
401 without the right token. Do not change the shipped notes or the token.
""",
        files={"notes_service/app.py": _NOTES_APP, "notes_service/service.ini.example": _NOTES_EXAMPLE,
               "secrets/token": _NOTES_TOKEN, **_NOTES_SEED},
        tests=_NOTES_TESTS,
        weights={"test_starts_and_answers_health": 2, "test_config_file": 1, "test_pid_file_names_the_server": 1,
                 "test_token_is_required": 1, "test_notes_round_trip": 2},
        guards=["test_guard_seed_notes_unchanged"],
        solution=_NOTES_SOLUTION,
        tags=["service", "http", "python", "config"],
        dev_tools=True,
        limits=_SERVICE_LIMITS,
        harbor=True,
    ),
    Spec(
        task_id="svc-kv-tcp-server",
        title="A TCP key-value server with a binary snapshot and a journal",
        difficulty="medium",
        category="services",
        instruction="""
Write a key-value server as specified in /app/kv/PROTOCOL.md: it loads the binary snapshot
/app/kv/snapshot.bin, replays its journal, serves the line protocol on 127.0.0.1:7379 to many clients at
once, and journals every change so it survives kill -9.

Put the server in /app/kv/server.py (Python 3 standard library only) and write /app/kv/start.sh, which starts
it in the background and returns (exit 0) once the port accepts connections. Do not modify snapshot.bin.
""",
        files={"kv/PROTOCOL.md": _PROTOCOL, "kv/snapshot.bin": _SNAPSHOT},
        tests=_KV_TESTS,
        weights={"test_ping_and_snapshot": 2, "test_set_get_del": 1.5, "test_survives_kill_and_restart": 2,
                 "test_many_clients_at_once": 1},
        guards=["test_guard_snapshot_unchanged"],
        solution=_KV_SOLUTION,
        tags=["service", "tcp", "binary-format", "python"],
        dev_tools=True,
        limits=_SERVICE_LIMITS,
        held_out=True,
    ),
    Spec(
        task_id="svc-worker-control-script",
        title="A control script with pid file and log rotation for a queue worker",
        difficulty="medium",
        category="services",
        instruction="""
/app/worker/worker.py is a queue worker that runs in the foreground (see its docstring). Write
/app/worker/ctl.sh to run it as a daemon with `--queue /app/queue --log /app/logs/worker.log`:

- `ctl.sh start`: start the worker in the background, write its pid to /app/run/worker.pid, exit 0. If it is
  already running, start no second one and exit non-zero. A pid file left by a worker that is gone (stale)
  must not prevent a start.
- `ctl.sh status`: print `running PID` and exit 0 while the worker runs; otherwise print `stopped` and exit 3.
- `ctl.sh stop`: stop the worker with SIGTERM (wait for it to exit), remove the pid file, exit 0; exit 0 too
  when it was not running.
- `ctl.sh rotate`: rotate the log without restarting the worker: worker.log -> worker.log.1 -> worker.log.2 ->
  worker.log.3 (at most three old logs kept), and the running worker then writes to a fresh worker.log. The
  worker keeps its log file open, so change worker.py to reopen its log when it gets SIGHUP.
""",
        files={"worker/worker.py": _WORKER},
        tests=_WORKER_TESTS,
        weights={"test_start_processes_jobs": 2, "test_status_and_no_second_instance": 1, "test_stop": 1,
                 "test_stale_pid_file": 1, "test_rotate_keeps_the_same_worker_logging": 2},
        solution=_WORKER_SOLUTION,
        tags=["service", "daemon", "pid-file", "log-rotation", "bash"],
        dev_tools=True,
        limits=_SERVICE_LIMITS,
        harbor=True,
    ),
    Spec(
        task_id="svc-http-path-router",
        title="A path-prefix HTTP reverse proxy",
        difficulty="medium",
        category="services",
        instruction="""
Write /app/proxy/proxy.py, an HTTP reverse proxy (Python 3 standard library only) started as
`python3 /app/proxy/proxy.py CONFIG.json`, where CONFIG is like /app/proxy/routes.json:

- listen on 127.0.0.1 at the config's `listen` port;
- route each request to the backend of the route whose `prefix` is the longest that starts the request path;
  with `strip_prefix` true the backend gets the path without the prefix but with its leading `/`
  (`/api/users?id=3` -> `/users?id=3`), otherwise the path as is; the query string is kept;
- forward the method, the request body and the request headers, and add `X-Forwarded-For` (the client's
  address) and `X-Forwarded-Prefix` (the matched prefix);
- return the backend's status, body and headers (such as `Content-Type` and custom `X-...` headers);
- answer 404 when no route matches and 502 when the backend cannot be reached;
- serve several requests at once (a slow backend answer must not hold up the others).

The backends of routes.json are not part of this task; do not change routes.json.
""",
        files={"proxy/routes.json": _ROUTES},
        test_files={"backend.py": _BACKEND},
        tests=_ROUTER_TESTS,
        weights={"test_routes_by_longest_prefix": 2, "test_forwards_method_body_and_headers": 1.5,
                 "test_unknown_route_and_dead_backend": 1.5, "test_reads_the_config_it_is_given": 1,
                 "test_serves_requests_concurrently": 1},
        guards=["test_guard_routes_unchanged"],
        solution=_ROUTER_SOLUTION,
        tags=["service", "http", "proxy", "python"],
        dev_tools=True,
        limits=_SERVICE_LIMITS,
        held_out=True,
    ),
    Spec(
        task_id="svc-cron-scheduler",
        title="Make the little cron scheduler follow cron's rules",
        difficulty="medium",
        category="services",
        instruction="""
/app/sched/scheduler.py is a small cron (see its docstring; `--once --now YYYY-MM-DDTHH:MM` runs the jobs due
at that minute and exits). Its time fields are wrong. Make them follow cron:

- each field is `*`, a number, a range `a-b`, a list `a,b,c` of those, each optionally with a step `/n`
  (`*/15`, `9-17/4`, `0-30/10`); a stepped field counts from the start of its range (day of month `*/2` is
  1, 3, 5, ...);
- ranges: minute 0-59, hour 0-23, day of month 1-31, month 1-12, day of week 0-7 with both 0 and 7 meaning
  Sunday (1 is Monday);
- when both day of month and day of week are restricted (neither is `*`), a job is due when EITHER matches;
- a jobs file with an invalid field (out of range, a step of 0, a backwards range, garbage) makes the
  scheduler exit non-zero, naming the bad job on stderr, before running anything.

Also, a minute must never run twice: with `--state DIR`, running `--once` again for a minute that already ran
does nothing (remember the minutes done under DIR).
""",
        files={"sched/scheduler.py": _SCHEDULER},
        tests=_SCHED_TESTS,
        weights={"test_steps_and_lists": 1.5, "test_ranges_and_weekdays": 1.5, "test_day_of_month_or_weekday": 1,
                 "test_a_minute_runs_once": 1, "test_rejects_bad_fields": 1},
        solution=_SCHED_SOLUTION,
        tags=["scheduler", "cron", "python"],
        limits=_SERVICE_LIMITS,
        held_out=True,
    ),
    Spec(
        task_id="svc-two-service-stack",
        title="Start two dependent HTTP services without a port clash",
        difficulty="medium",
        category="services",
        instruction="""
/app/services has two HTTP services, users/users.py and orders/orders.py (see their docstrings); orders asks
users for customer names. Both default to port 8000, so they cannot run together as shipped.

- Write /app/start_all.sh: start users on 127.0.0.1:8001 and orders on 127.0.0.1:8002 (pointed at users) in
  the background, write their pids to /app/run/users.pid and /app/run/orders.pid, and return (exit 0) only
  when both answer `GET /health` with 200.
- Write /app/stop_all.sh: stop both, remove the pid files, exit 0.
- `GET /orders/10` on orders must answer 200 with the order, its total and the customer's name; fix what
  keeps it from doing so. Do not change the data files.
""",
        files={"services/users/users.py": _USERS, "services/users/users.json": _USERS_JSON,
               "services/orders/orders.py": _ORDERS, "services/orders/orders.json": _ORDERS_JSON},
        tests=_STACK_TESTS,
        weights={"test_start_all_returns_healthy": 2, "test_order_has_customer_name": 2,
                 "test_orders_health_follows_users": 1, "test_stop_all": 1},
        guards=["test_guard_data_unchanged"],
        solution=_STACK_SOLUTION,
        tags=["service", "http", "bash", "config"],
        dev_tools=True,
        limits=_SERVICE_LIMITS,
    ),
    Spec(
        task_id="svc-process-supervisor",
        title="A process supervisor with restarts, backoff and a status file",
        difficulty="medium",
        category="services",
        instruction="""
Write /app/super/supervise.py (Python 3 standard library only), a process supervisor started as
`python3 /app/super/supervise.py PROGRAMS.ini`. The INI file has a `[supervisor]` section with `status_file`
(a path) and one `[program:NAME]` section per program with:

- `command` (required): split like a shell would (shlex) and run directly, one process per program;
- `restart`: `always` (default: restart whenever it exits), `on-failure` (only after a non-zero exit) or
  `never`;
- `max_restarts` (default 3) and `backoff_s` (default 1): wait backoff_s seconds before each restart; a program
  that exits again after max_restarts restarts is given up.

Keep `status_file` up to date (rewrite it whenever a state changes; write it atomically) as JSON:
`{"NAME": {"state": ..., "pid": ..., "restarts": ..., "exit_code": ...}}` where state is `RUNNING`, `BACKOFF`
(waiting to restart), `EXITED` (ended and not to be restarted), `FATAL` (given up) or `STOPPED`; `restarts`
counts restarts so far, `exit_code` is the last exit status (null before any exit). On SIGTERM the supervisor
stops all its programs with SIGTERM, marks them `STOPPED`, writes the file and exits 0.
""",
        files={"super/README.md": "Put supervise.py here.\n"},
        tests=_SUPER_TESTS,
        weights={"test_starts_every_program": 1.5, "test_crashing_program_is_retried_then_fatal": 2,
                 "test_restart_never_and_clean_exit": 1, "test_killed_program_comes_back": 1,
                 "test_sigterm_stops_everything": 1.5},
        solution=_SUPER_SOLUTION,
        tags=["service", "process-management", "python"],
        limits=_SERVICE_LIMITS,
        held_out=True,
    ),
]
