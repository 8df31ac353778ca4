import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/users.json': 'e587aa67a26d5c759f311530d7b70761caca7e0bafdcfd03eff7f5bf06341cb2'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['ana', 'dara']


def _got():
    return Path("/app/core_active.txt").read_text().split()


def test_only_active_core_members():
    got = _got()
    assert got and set(got) <= set(EXPECTED)


def test_names():
    assert sorted(_got()) == sorted(EXPECTED)


def test_order_and_nothing_else():
    assert _got() == EXPECTED
