import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/prices.txt': '66c9025a8f4a8de2688852e9c7fcbf2e227ea7cc8cd49739c38d97da1dabcdab', '/app/total.py': '864db0efbeda02fa5bf27b91ae2dda50e09a2450a954c9d5e9450b01c38026f6'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _run(tmp_path=None, text=None):
    if text is not None:
        Path("/app/prices.txt").write_text(text)
    result = run("python3", "/app/total.py")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_given_prices():
    assert _run() == "total=123.85"


def test_two_decimals_always():
    original = Path("/app/prices.txt").read_text()
    try:
        assert _run(text="1\n2\n") == "total=3.00"
    finally:
        Path("/app/prices.txt").write_text(original)


def test_half_up_and_tenths():
    original = Path("/app/prices.txt").read_text()
    try:
        assert _run(text="0.1\n0.2\n") == "total=0.30"
        assert _run(text="0.125\n") == "total=0.13"
    finally:
        Path("/app/prices.txt").write_text(original)
