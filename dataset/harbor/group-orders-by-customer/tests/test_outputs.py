import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/orders.json': '09ffbfc1e2e6a4f61856e48d42cb68788f8bb684797adfbe504a2925c4c9fcc9'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = {'ana': 40131, 'bo': 33023, 'chen': 11796, 'dara': 14834, 'emil': 20024}


def _got():
    return json.loads(Path("/app/revenue.json").read_text())


def test_customers():
    assert sorted(_got()) == sorted(EXPECTED)


def test_totals():
    assert _got() == EXPECTED


def test_keys_sorted_and_integers():
    got = _got()
    assert list(got) == sorted(EXPECTED) and all(type(v) is int for v in got.values())
