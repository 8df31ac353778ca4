import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/numbers.txt': '8371091105d2e75879f747bb4fdeef80b95a26afc76d2cdbe97a9ac1c0e953f5', '/app/stats.py': '4ec6945a5ee1bac152f8f47e5e7c11d07bd4a5362eba4486f52e6aadf694aacc'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def run_stats(*args):
    return run("python3", "/app/stats.py", *args, timeout=30)


def test_default_file_mean():
    result = run_stats()
    assert result.returncode == 0, result.stderr
    assert "mean=16.00" in result.stdout.splitlines()


def test_default_file_max():
    result = run_stats()
    assert result.returncode == 0, result.stderr
    assert "max=42.00" in result.stdout.splitlines()


def test_other_file(tmp_path):
    data = tmp_path / "values.txt"
    data.write_text("5\n\n1.5\n-2\n\n")
    result = run_stats(str(data))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["mean=1.50", "max=5.00"]


def test_input_file_unchanged():
    assert unchanged("/app/numbers.txt")
