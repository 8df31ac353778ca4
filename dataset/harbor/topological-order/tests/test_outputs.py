import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/jobs.txt': '1a5fcb844fe1c3ff1bb6eca26dfe0b0b944f62c1c0269e244efe9fd94891bf1d'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _run(path):
    return run("python3", "/app/order.py", str(path))


def test_sample():
    result = _run("/app/jobs.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["fetch", "build", "docs", "test", "deploy"]


def test_undeclared_dependency(tmp_path):
    f = tmp_path / "j.txt"
    f.write_text("b: a\nc:\n")
    assert _run(f).stdout.split() == ["a", "b", "c"]


def test_cycle(tmp_path):
    acyclic = tmp_path / "a.txt"
    acyclic.write_text("x: y\ny:\n")
    assert _run(acyclic).stdout.split() == ["y", "x"]
    f = tmp_path / "c.txt"
    f.write_text("x: y\ny: z\nz: x\nw:\n")
    result = _run(f)
    assert result.returncode == 2 and "cycle" in result.stderr
