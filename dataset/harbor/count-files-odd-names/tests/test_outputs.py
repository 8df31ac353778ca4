import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/drop/plain.txt': '4355a46b19d348dc2f57c046f8ef63d4538ebb936000f3c9ee954a27460dd865', '/app/drop/sub/also plain.txt': '53c234e5e8472b6ac51c1ae1cab3fe06fad053beb8ebfd8977b010655bfdd3c3'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = sorted(["plain.txt", "sub/also plain.txt", "two\nlines.txt", "--", " lead space", "ünïcødé ✓.txt",
                   "sub/dir with space/-rf"], key=lambda name: name.encode())


def _entries():
    data = Path("/app/files.list").read_bytes()
    assert data.endswith(b"\0"), "every path must be followed by a NUL byte"
    return [entry.decode() for entry in data[:-1].split(b"\0")]


def test_count():
    assert int(Path("/app/count.txt").read_text().strip()) == 7


def test_list_names():
    assert sorted(_entries()) == sorted(EXPECTED)


def test_list_sorted_by_bytes():
    assert _entries() == EXPECTED


def test_files_still_there():
    assert sum(1 for p in Path("/app/drop").rglob("*") if p.is_file() and not p.is_symlink()) == 7
    assert Path("/app/drop/link-to-plain").is_symlink()
