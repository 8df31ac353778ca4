import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/stock.csv': 'e24360ffe5ba9b70928cc18a98a3eca094cce9309c8d0fcdb886a87c96d8044a'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['sku,name,qty', 'A1,bolt,10', 'B2,nut,5', 'C3,washer,7', 'B2,nut,6']


def _lines():
    return Path("/app/stock_unique.csv").read_text().splitlines()


def test_no_duplicates():
    lines = _lines()
    assert lines[:1] == EXPECTED[:1], "the header first"
    assert len(lines) == len(set(lines))


def test_same_distinct_rows():
    # each row as often as it should be (once): a copy of the input, duplicates and all, earns nothing
    assert sorted(_lines()) == sorted(EXPECTED)


def test_first_occurrence_order():
    assert _lines() == EXPECTED
