import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/config.json': '6c8f25bdcaac5d531fa28592a781d6b2ec5b0864ccffcc8b5d8acc1ac38d4f4f'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = {'service.name': 'billing', 'service.replicas': 3, 'service.ports.http': 8080, 'service.ports.admin': 9090, 'db.host': 'db.internal', 'db.pool.min': 2, 'db.pool.max': 10, 'debug': False, 'tags': ['a', 'b']}


def _flat():
    return json.loads(Path("/app/flat.json").read_text())


def test_is_a_flat_object():
    flat = _flat()
    assert isinstance(flat, dict) and flat and not any(isinstance(v, dict) for v in flat.values())
    assert flat.get("tags") == ["a", "b"], "a list is a leaf"


def test_keys():
    assert sorted(_flat()) == sorted(EXPECTED)


def test_values_and_types():
    assert _flat() == EXPECTED
