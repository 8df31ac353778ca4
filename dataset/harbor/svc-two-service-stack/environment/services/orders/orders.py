"""orders service: GET /health (503 while users cannot be reached), GET /orders/ID -> the order with its
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
        match = re.fullmatch(r"/orders/(\d+)", self.path)
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
