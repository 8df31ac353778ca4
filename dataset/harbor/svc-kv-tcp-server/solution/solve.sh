#!/bin/bash
mkdir -p /app/kv
cat > /app/kv/server.py <<'EOF'
"""Line-based key-value server (see PROTOCOL.md)."""
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
EOF
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
