import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _check(*lines):
    result = run("python3", "/app/brackets.py", input="".join(l + "\n" for l in lines))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_balanced():
    assert _check("(a[b]{c})", "", "no brackets", "{[()()]}") == ["ok"] * 4


def test_unexpected_closer():
    assert _check("(]", "a)b", "([)]") == ["error at 2", "error at 2", "error at 3"]


def test_unclosed_opener():
    assert _check("((x)", "ok {", "[()") == ["error at 1", "error at 4", "error at 1"]
