import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/service.log': '7fe1905a5016473f73f7c4cf1315f692858cc541f5c6a03eae43f7bcc1cd7819'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['00 1', '01 6', '02 2', '03 2', '04 3', '05 4', '06 2', '07 1', '08 5', '09 1', '10 3', '11 2', '12 2', '13 2', '14 6', '15 2', '16 5', '17 3', '18 3', '19 4', '20 6', '21 2', '22 7', '23 1']


def _lines():
    return Path("/app/errors_per_hour.txt").read_text().splitlines()


def test_format():
    lines = _lines()
    assert lines and all(len(l.split()) == 2 and len(l.split()[0]) == 2 for l in lines)


def test_hours_present():
    assert [l.split()[0] for l in _lines()] == [e.split()[0] for e in EXPECTED]


def test_counts_exact():
    assert _lines() == EXPECTED


def test_log_unchanged():
    assert unchanged("/app/service.log")
