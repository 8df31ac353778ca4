import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/matrix.txt': 'af42adb4da06f60e048bbf1f689f99495772dcd3bd5a2a4ac7db3deefc10a99c'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _rows():
    return [l.split(" ") for l in Path("/app/transposed.txt").read_text().splitlines()]


def test_shape():
    rows = _rows()
    assert len(rows) == 4 and all(len(r) == 3 for r in rows)


def test_first_row():
    assert _rows()[0] == ["1", "5", "9"]


def test_values():
    assert _rows() == [["1", "5", "9"], ["2", "6", "10"], ["3", "7", "11"], ["4", "8", "12"]]
