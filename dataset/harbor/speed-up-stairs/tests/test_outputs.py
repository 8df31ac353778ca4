import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/stairs.py': '604a7ef1b5b188d45cd3f9588c1e62e871045553873808798c785ff226ed89c7'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _ways(n, timeout=10):
    result = run("python3", "/app/stairs.py", str(n), timeout=timeout)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


def test_small_values():
    assert [_ways(n) for n in (0, 1, 2, 3, 4, 10)] == [1, 1, 2, 4, 7, 274]
    assert _ways(40, timeout=5) == 23837527729


def test_n_60_is_fast():
    assert _ways(60) == 4680045560037375


def test_n_5000():
    value = _ways(5000)
    assert len(str(value)) == 1324 and value % 1_000_000_007 == 965592141
