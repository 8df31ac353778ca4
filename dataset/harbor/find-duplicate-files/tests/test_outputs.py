import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/photos/a.jpg': 'e44e01f84c5a2769edf01c5e2f44b22a14709985a69a3ab31fe2c13358ad3d9a', '/app/photos/b.jpg': '91ce52e4231f908ae101dfb0b1e4248a91cf586b1a679d0f4584d9e9c97abf02', '/app/photos/copy of a.jpg': 'e44e01f84c5a2769edf01c5e2f44b22a14709985a69a3ab31fe2c13358ad3d9a', '/app/photos/old/a-2019.jpg': 'e44e01f84c5a2769edf01c5e2f44b22a14709985a69a3ab31fe2c13358ad3d9a', '/app/photos/old/b again.jpg': '91ce52e4231f908ae101dfb0b1e4248a91cf586b1a679d0f4584d9e9c97abf02', '/app/photos/old/c.jpg': 'd6edbdcbfb3e1aca8fa17ac2a3de31f163ad1faf4f554140aa7f97ac36b59095', '/app/photos/unique.png': 'e1dd52c4fded473678d49aa9270d577e5a8fb064b45824dc1dd200427ec3cb52'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['/app/photos/a.jpg\t/app/photos/copy of a.jpg\t/app/photos/old/a-2019.jpg', '/app/photos/b.jpg\t/app/photos/old/b again.jpg']


def _lines():
    return Path("/app/duplicates.txt").read_text().splitlines()


def test_groups_found():
    assert sorted(set(p for l in _lines() for p in l.split("\t"))) == sorted(p for l in EXPECTED for p in l.split("\t"))


def test_grouping():
    assert sorted(tuple(sorted(l.split("\t"))) for l in _lines()) == sorted(tuple(l.split("\t")) for l in EXPECTED)


def test_exact_format():
    assert _lines() == EXPECTED
