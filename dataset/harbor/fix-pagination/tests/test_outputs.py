import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/paginate.py': '70f95756cbea81ef3f3a3f89cbf52b5c4a8834fe8c7ea6220a19115ff6bd7b18'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import sys

sys.path.insert(0, "/app")


def _module():
    import importlib

    import paginate

    return importlib.reload(paginate)


def test_first_and_middle_pages():
    m = _module()
    items = list(range(1, 11))
    assert m.paginate(items, 1, 3) == [1, 2, 3]
    assert m.paginate(items, 2, 3) == [4, 5, 6]


def test_last_page_and_past_the_end():
    m = _module()
    items = list(range(1, 11))
    assert m.paginate(items, 4, 3) == [10]
    assert m.paginate(items, 5, 3) == []


def test_page_count():
    m = _module()
    assert [m.page_count(n, 3) for n in (0, 1, 3, 4, 10)] == [0, 1, 1, 2, 4]
