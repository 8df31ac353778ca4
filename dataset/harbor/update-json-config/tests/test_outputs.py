import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/config.json': 'b4d1e1a3bd39fe6eb415cdd25b060a0aad6089e2a1d151738247c1ef50ec92d8'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = {'name': 'inventory', 'server': {'port': 9000, 'workers': 2, 'timeouts': {'read': 30, 'write': 60}}, 'features': ['search', 'export'], 'database': {'url': 'sqlite:///app.db', 'pool_size': 10}}


def _config():
    return json.loads(Path("/app/config.json").read_text())


def test_server_changes():
    server = _config()["server"]
    assert server["port"] == 9000 and server["timeouts"]["write"] == 60


def test_features_and_pool():
    config = _config()
    assert config["features"] == ["search", "export"] and config["database"]["pool_size"] == 10


def test_everything_else_and_indent():
    assert _config() == EXPECTED
    assert Path("/app/config.json").read_text().startswith('{\n  "name"')
