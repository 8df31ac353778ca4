#!/bin/bash
mkdir -p /app/proxy
cat > /app/proxy/proxy.py <<'EOF'
"""Path-prefix HTTP reverse proxy.  python3 proxy.py ROUTES.json"""
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
EOF
