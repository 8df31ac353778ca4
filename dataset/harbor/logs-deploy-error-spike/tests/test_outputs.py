import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/api_access.jsonl': '6f7cecf15f3d6b325b05fdc0fb7058af91c474f44999e9c822a339cffc8c6eb4', '/app/logs/deploys.log': '09c3feba152cdd6f24ff7da86368de0b3fe507ef8d948399068980677aa5b809'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


TRUTH = {'version': 'v2.14.1', 'commit': '73ed0f7', 'error_rate': 0.0818, 'top_error_path': '/v1/search'}


def _spike():
    data = json.loads(Path("/app/spike.json").read_text())
    assert isinstance(data, dict)
    return data


def test_culprit_version():
    assert _spike().get("version") == TRUTH["version"]


def test_culprit_commit():
    assert _spike().get("commit") == TRUTH["commit"]


def test_error_rate():
    rate = _spike().get("error_rate")
    assert isinstance(rate, (int, float)) and abs(rate - TRUTH["error_rate"]) < 0.0006


def test_top_error_path():
    assert _spike().get("top_error_path") == TRUTH["top_error_path"]


def test_logs_unchanged():
    assert unchanged("/app/logs/deploys.log") and unchanged("/app/logs/api_access.jsonl")
