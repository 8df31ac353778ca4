import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/people.csv': 'b8509561ca17fb3e2e23c8f3c102532507abf580b4da942d913e14dee393d736'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = [{'id': 1, 'name': 'Ana', 'age': 34, 'city': 'Lisbon'}, {'id': 2, 'name': 'Bo', 'age': 27, 'city': 'Oslo'}, {'id': 3, 'name': 'Chen, Wei', 'age': 45, 'city': 'Taipei'}, {'id': 4, 'name': 'Dara', 'age': 19, 'city': None}, {'id': 5, 'name': 'Émile', 'age': 61, 'city': 'Lyon'}]


def _rows():
    return [json.loads(line) for line in Path("/app/people.jsonl").read_text().splitlines() if line.strip()]


def test_one_object_per_row():
    assert len(_rows()) == len(EXPECTED)


def test_types():
    rows = _rows()
    assert len(rows) == len(EXPECTED)
    assert all(isinstance(r["id"], int) and isinstance(r["age"], int) and isinstance(r["name"], str) for r in rows)


def test_empty_cell_is_null_and_quotes_kept():
    rows = _rows()
    assert len(rows) == len(EXPECTED)
    assert rows[3]["city"] is None and rows[2]["name"] == "Chen, Wei" and rows[4]["name"] == "Émile"


def test_values_exact():
    assert _rows() == EXPECTED
