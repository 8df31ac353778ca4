import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/intervals.txt': '7a74df6049f8a30cc876d09d619f71f7a9e68f339fc71e45df0edd3005a7d8aa'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _got():
    return [tuple(map(int, l.split())) for l in Path("/app/merged.txt").read_text().splitlines() if l.strip()]


def test_count():
    assert len(_got()) == 5


def test_sorted_disjoint_and_covering():
    got = _got()
    assert got
    assert all(a[1] < b[0] for a, b in zip(got, got[1:]))
    for start, end in [(8, 10), (1, 3), (2, 6), (15, 18), (6, 7), (20, 20), (17, 19), (11, 12)]:
        assert any(s <= start and end <= e for s, e in got), (start, end)


def test_exact():
    assert _got() == [(1, 7), (8, 10), (11, 12), (15, 19), (20, 20)]
