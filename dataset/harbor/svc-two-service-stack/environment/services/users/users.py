"""users service: GET /health, GET /users/ID -> {"id", "name"}. Port: $USERS_PORT (default 8000)."""
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
        match = re.fullmatch(r"/users/(\d+)", self.path)
        if match and match.group(1) in USERS:
            return self._send(200, {"id": int(match.group(1)), "name": USERS[match.group(1)]})
        return self._send(404, {"error": "not found"})

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("USERS_PORT", "8000"))), Handler).serve_forever()
