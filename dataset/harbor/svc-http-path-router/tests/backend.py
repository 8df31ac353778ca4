"""Test backend: answers every request with JSON describing it (name, method, path, headers, body)."""
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
