import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/durations.py': '98c28f9eef8e188ab66c7af0c542e5baf1364bef8c60e69ed6bd72d4ff5b03a7', '/app/projects.txt': '3b25e76e40dc4f422d8bc38f0ac4e5ed0cce1c191f47e7522eed40a1e1664d2a'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import re


def _out():
    result = run("python3", "/app/durations.py")
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_one_line_per_project():
    out = _out()
    assert [line.split()[0] for line in out] == ["alpha", "beta", "gamma", "delta"]
    assert all(re.fullmatch(r"[a-z]+ -?[0-9]+", line) for line in out), out


def test_sample_projects():
    assert _out() == ["alpha 15", "beta 42", "gamma 3", "delta 31"]


def test_other_projects():
    original = Path("/app/projects.txt").read_text()
    try:
        Path("/app/projects.txt").write_text("leap 2024-02-28 2024-03-01\nnewyear 2026-12-31 2027-01-01\nsame 2026-05-05 2026-05-05\nlong 2025-01-13 2026-01-12\n")
        assert _out() == ["leap 2", "newyear 1", "same 0", "long 364"]
    finally:
        Path("/app/projects.txt").write_text(original)
