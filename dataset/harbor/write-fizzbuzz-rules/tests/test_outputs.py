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


def _run(n):
    result = run("python3", "/app/fizz.py", str(n))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_first_fifteen():
    assert _run(15) == ["1", "2", "Fizz", "4", "Buzz", "Fizz", "Bazz", "8", "Fizz", "Buzz", "11", "Fizz", "13", "Bazz", "FizzBuzz"]


def test_combinations():
    out = _run(105)
    assert out[20] == "FizzBazz" and out[34] == "BuzzBazz" and out[104] == "FizzBuzzBazz" and len(out) == 105


def test_zero_and_one():
    assert _run(0) == []
    assert _run(1) == ["1"]
