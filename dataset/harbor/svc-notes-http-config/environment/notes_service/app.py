"""Notes service: a tiny JSON API over a directory of text notes.

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
