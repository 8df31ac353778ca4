import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/defaults.env': '7f3a624b00e698f1641a5eccc9efda163840652c4b8d1539df07a350b114fd1b', '/app/overrides.env': '2e1691becba95d921d16b555fe85f72d3ba99fca385d9327a80afed664b613f1'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['APP_ENV=development', 'LOG_LEVEL=debug', 'PORT=8000', 'FEATURE_X=on', 'REGION=eu-west']


def _lines():
    return Path("/app/.env").read_text().splitlines()


def test_values():
    pairs = [l.split("=", 1) for l in _lines() if "=" in l]
    assert len({key for key, _ in pairs}) == len(pairs), "a key is set twice"
    assert dict(pairs) == dict(l.split("=", 1) for l in EXPECTED)


def test_only_key_value_lines():
    lines = _lines()
    assert len(lines) == len(EXPECTED)
    assert all(l and not l.startswith("#") and "=" in l for l in lines)


def test_order():
    assert _lines() == EXPECTED
