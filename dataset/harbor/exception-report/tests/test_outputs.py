import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/app.log': '4a61f2f26fdf19b25d2e6a480264ed79cf4895a8bec65182b091c4cb7a305a87'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['13 java.io.IOException', '9 java.lang.NullPointerException', '7 com.acme.QuotaExceeded', '2 java.util.ConcurrentModificationException']


def _got():
    return [l for l in Path("/app/exceptions.txt").read_text().splitlines() if l.strip()]


def test_types_found():
    assert sorted(l.split()[1] for l in _got()) == sorted(e.split()[1] for e in EXPECTED)


def test_counts_right():
    assert sorted(_got()) == sorted(EXPECTED)


def test_order():
    assert _got() == EXPECTED
