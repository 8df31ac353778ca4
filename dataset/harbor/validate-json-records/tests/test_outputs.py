import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/records.json': '48cc9f797ef4b5bca30a25ba1a10a63f209cd19320318ee3ab58e6ca54295b45'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['r00', 'r01', 'r03', 'r07', 'r08', 'r10', 'r13', 'r14', 'r15', 'r16', 'r21', 'r22', 'r25', 'r29']


def _got():
    return Path("/app/invalid.txt").read_text().split()


def test_every_invalid_found():
    assert set(EXPECTED) <= set(_got())


def test_no_valid_record_reported():
    got = _got()
    assert got and set(got) <= set(EXPECTED)


def test_order():
    assert _got() == EXPECTED
