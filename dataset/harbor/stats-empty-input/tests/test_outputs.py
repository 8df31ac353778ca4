import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/stats.py': '7f947b875d780f67d9ddcbbdda9ac6b97cf5bcc7907aec2b18f06dce5e19be04'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _run(tmp_path, text):
    f = tmp_path / "n.txt"
    f.write_text(text)
    result = run("python3", "/app/stats.py", str(f))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_ordinary_output_unchanged(tmp_path):
    assert _run(tmp_path, "3\n-1\n10\n") == ["count=3", "min=-1", "max=10", "mean=4.00"]


def test_empty_file(tmp_path):
    assert _run(tmp_path, "") == ["count=0", "min=none", "max=none", "mean=none"]


def test_blank_lines_and_spaces(tmp_path):
    assert _run(tmp_path, "\n  4 \n\t\n 6\n\n") == ["count=2", "min=4", "max=6", "mean=5.00"]


def test_only_blank_lines(tmp_path):
    assert _run(tmp_path, "\n \n\t\n") == ["count=0", "min=none", "max=none", "mean=none"]
