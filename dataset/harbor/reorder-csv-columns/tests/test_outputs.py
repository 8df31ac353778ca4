import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/contacts.csv': '4d2075fed1239a425a009736c6aac70fe29bd1c530f16eedbca6c6f310d371c9'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['city,name,email', 'Lisbon,Ana,ana@example.org', 'Oslo,Bo,bo@example.org', 'Taipei,Chen,chen@example.org']


def _lines():
    return Path("/app/contacts_out.csv").read_text().splitlines()


def test_header():
    assert _lines()[:1] == EXPECTED[:1]


def test_city_column_first():
    lines = _lines()
    assert len(lines) == len(EXPECTED)
    assert [l.split(",")[0] for l in lines] == [e.split(",")[0] for e in EXPECTED]


def test_rows():
    assert _lines() == EXPECTED


def test_input_unchanged():
    assert unchanged("/app/contacts.csv")
