import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/nested/a/readme.txt': 'c9adc5e681b1c62c69fd1af69682f0ee7232a68223e23811d703fcc30965c706', '/app/nested/b/c/readme.txt': '0f937a8d9496525b8778008559795c2e93b58cc4523175f81ba852ffa72e558a', '/app/nested/b/c/unique.md': '282393bfbf7f394be8f0f0d4c59e26b2acd4fa698b5d13a62c6e95431ac10a3b', '/app/nested/b/readme.txt': '9e44463e7d4bfc3d473815cf17fc52165a347e48322691c6dfce6d5c4481fe33', '/app/nested/top.txt': 'f7de2947c64cb6435e15fb2bef359d1ed5f6356b2aebb7b20535e3772904e6db'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = {'/app/flat/a_readme.txt': 'a readme\n', '/app/flat/b_readme.txt': 'b readme\n', '/app/flat/b_c_readme.txt': 'c readme\n', '/app/flat/b_c_unique.md': 'unique\n', '/app/flat/top.txt': 'top\n'}


def test_names():
    assert sorted(str(p) for p in Path("/app/flat").iterdir()) == sorted(EXPECTED)
    # the files of the tree, each once (under any of the names): the right names over made-up or repeated
    # contents earn nothing
    assert sorted(Path(p).read_text() for p in EXPECTED) == sorted(EXPECTED.values())


def test_contents():
    for path, content in EXPECTED.items():
        assert Path(path).read_text() == content


def test_same_name_in_different_folders():
    readmes = ["/app/flat/a_readme.txt", "/app/flat/b_readme.txt", "/app/flat/b_c_readme.txt"]
    assert [Path(p).read_text() for p in readmes] == [EXPECTED[p] for p in readmes]


def test_source_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
