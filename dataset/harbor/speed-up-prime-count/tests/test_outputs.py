import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/primes.py': '57bf9ce44199ad7f7da7f38efdf83bf7b651957fb9b62650735e30ad753906b3'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import functools


def _count(limit, timeout=30):
    result = run("python3", "/app/primes.py", str(limit), timeout=timeout)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


@functools.lru_cache(maxsize=None)
def _two_million():
    """One timed run for LIMIT = 2,000,000 (shared by the tests); None when it took over 15 s."""
    try:
        return _count(2_000_000, timeout=15)
    except subprocess.TimeoutExpired:
        return None


def test_small_limits():
    assert _two_million() is not None, "primes.py still takes over 15 s for 2,000,000"
    assert [_count(n) for n in (0, 1, 2, 3, 10, 100)] == [0, 0, 0, 1, 4, 25]


def test_one_hundred_thousand():
    assert _count(100_000, timeout=10) == 9592


def test_two_million_is_fast():
    assert _two_million() == 148933
