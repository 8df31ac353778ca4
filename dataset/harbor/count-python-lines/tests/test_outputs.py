import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/src/README.md': '7426eb15d8c9bb38224d8b80bb80c9461e00a3ac4cb7abe858b7dba4b833ab1d', '/app/src/app/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/src/app/data.json': 'ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356', '/app/src/app/main.py': '8b0e8d408ece7a88b77c13aad6ef7e4ecbe8c19bfa845008853c7dfd6a74a216', '/app/src/app/util/more strings.py': '17bf1d145047a268898830f82305de07f0bfa162553349e84171970b7ab43083', '/app/src/app/util/strings.py': 'd78fff51f2aea9cb634456d3c83925ae047d967798f28e8a4b3e7b232a1dc097'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


PER_FILE = [(0, 'app/__init__.py'), (8, 'app/main.py'), (5, 'app/util/more strings.py'), (2, 'app/util/strings.py')]


def _answer():
    return Path("/app/answer.txt").read_text().strip()


def _per_file():
    return [l for l in Path("/app/per_file.txt").read_text().splitlines() if l.strip()]


def test_total():
    assert int(_answer()) == 15


def test_every_python_file_listed():
    paths = [l.split(" ", 1)[1] for l in _per_file()]
    assert paths and sorted(paths) == sorted(p for _, p in PER_FILE)


def test_per_file_counts_in_order():
    assert _per_file() == [f"{n} {p}" for n, p in PER_FILE]


def test_sources_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
