import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/access.log': '133117c977e7f744c0646d5bb085275115c46f094cb869d5b9266b29791e1074'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['30 192.0.2.7', '22 192.0.2.15', '17 192.0.2.23']


def _pairs():
    return [line.split() for line in Path("/app/top3.txt").read_text().splitlines() if line.strip()]


def test_three_lines():
    pairs = _pairs()
    assert len(pairs) == 3 and all(len(p) == 2 and p[0].isdigit() for p in pairs)
    assert set(p[1] for p in pairs) <= set(line.split()[0] for line in Path("/app/access.log").read_text().splitlines())


def test_busiest_first():
    assert " ".join(_pairs()[0]) == EXPECTED[0]


def test_all_three():
    assert [" ".join(p) for p in _pairs()] == EXPECTED
