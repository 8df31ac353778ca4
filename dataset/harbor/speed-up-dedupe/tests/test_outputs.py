import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/dedupe.py': 'd43d0d971ee5a8a7d5114950677e324d74d640cc0dcec234bddb44ee63559d39'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import functools
import random
import tempfile


@functools.lru_cache(maxsize=None)
def _large():
    """One run on 200,000 lines (shared by the tests): (result or None when it took over 20 s, expected output)."""
    rng = random.Random(5)
    lines = [f"item-{rng.randrange(100_000)}\n" for _ in range(200_000)]
    path = Path(tempfile.mkdtemp()) / "large.txt"
    path.write_text("".join(lines))
    expected = "".join(dict.fromkeys(lines))
    try:
        return run("python3", "/app/dedupe.py", str(path), timeout=20), expected
    except subprocess.TimeoutExpired:
        return None, expected


def _dedupe(tmp_path, text):
    result, _ = _large()
    assert result is not None, "dedupe.py still takes over 20 s on 200,000 lines"
    path = tmp_path / "in.txt"
    path.write_text(text)
    result = run("python3", "/app/dedupe.py", str(path))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_small(tmp_path):
    assert _dedupe(tmp_path, "b\na\nb\nc\na\n") == "b\na\nc\n"


def test_last_line_and_spaces_kept(tmp_path):
    assert _dedupe(tmp_path, "x\ny\nx") == "x\ny\nx"
    assert _dedupe(tmp_path, "a \na\na \n\n\n") == "a \na\n\n"


def test_large_file_is_fast():
    result, expected = _large()
    assert result is not None, "dedupe.py still takes over 20 s on 200,000 lines"
    assert result.returncode == 0 and result.stdout == expected
