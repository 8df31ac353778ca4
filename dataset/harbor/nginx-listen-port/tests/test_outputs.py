import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/nginx.conf': '52ea73bab0deb52a04fb52b91332e8ecf958e53b7b40c019c071fd0fe5e7ae61'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import re

ORIGINAL = 'server {\n    listen 80;\n    server_name example.org;\n    location / {\n        proxy_pass http://127.0.0.1:8080;\n    }\n}\n\nserver {\n    listen 443 ssl;\n    server_name example.org;\n}\n\nserver {\n    listen   80 default_server;\n    return 404;\n}\n'


def _text():
    return Path("/app/nginx.conf").read_text()


def _listens():
    return [" ".join(l.split()) for l in _text().splitlines() if l.split()[:1] == ["listen"]]


def test_port_80_gone():
    listens = _listens()
    assert len(listens) == 3 and "listen 443 ssl;" in listens
    assert not re.search(r"listen\s+80\b", _text())


def test_first_server_on_8081():
    assert _listens()[0] == "listen 8081;"


def test_default_server_on_8081():
    assert _listens()[2] == "listen 8081 default_server;"


def test_rest_unchanged():
    def normal(text):
        return [" ".join(l.split()) for l in text.splitlines() if l.strip()]

    original = normal(ORIGINAL)
    now = [l.replace("listen 8081", "listen 80") for l in normal(_text())]
    assert now == original
