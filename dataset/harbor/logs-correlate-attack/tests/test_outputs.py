import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/access.log': '19654768c576f2383f43a69c3d8a4fc2b22266cf45a082513b15dba1399eea53', '/app/logs/app.log': '46d9d8520c4cf8690ac5f25e9e34287e8af820571f6eea9d07c76d6bd8c4f3b8', '/app/logs/auth.log': 'b6950c504c6968598ac81bf2bd544aee74c10baa3aa4ca71b4dcb0330b3161aa'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


TRUTH = {'attacker_ip': '203.0.113.77', 'compromised_accounts': ['oscar', 'pilar', 'yusuf'], 'first_compromised_account': 'yusuf', 'first_compromised_at': '2024-03-03T07:55:38Z'}


def _findings():
    data = json.loads(Path("/app/findings.json").read_text())
    assert isinstance(data, dict)
    return data


def test_attacker_ip():
    assert _findings().get("attacker_ip") == TRUTH["attacker_ip"]


def test_compromised_accounts():
    assert _findings().get("compromised_accounts") == TRUTH["compromised_accounts"]


def test_first_compromised_account():
    assert _findings().get("first_compromised_account") == TRUTH["first_compromised_account"]


def test_first_compromised_at():
    assert _findings().get("first_compromised_at") == TRUTH["first_compromised_at"]


def test_logs_unchanged():
    assert all(unchanged(f"/app/logs/{name}") for name in ("access.log", "app.log", "auth.log"))
