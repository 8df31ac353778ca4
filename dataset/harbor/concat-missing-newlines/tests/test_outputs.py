import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/parts/part1.txt': 'bbfb79e82216bd2db1ad2c507d44ddf80aeb12f64f9562056afe93aad43154d9', '/app/parts/part2.txt': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/parts/part3.txt': '87ff44af35b2a16273a7989f0902a7999558dd8f9e4c9f74fb21b9ee33ebe419'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _text():
    return Path("/app/all.txt").read_text()


def test_lines():
    assert _text().splitlines() == ["alpha", "beta", "gamma", "delta"]


def test_part_boundaries():
    assert "alpha\nbeta\ngamma\n" in _text()


def test_ends_with_one_newline():
    # from the first part to the last: a copy of one part (the last ends with a newline) earns nothing
    assert _text().startswith("alpha\n") and _text().endswith("delta\n") and not _text().endswith("\n\n")


def test_parts_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
