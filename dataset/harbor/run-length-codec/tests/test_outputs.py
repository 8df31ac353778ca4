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


def _rle(mode, text):
    result = subprocess.run(["python3", "/app/rle.py", mode], input=text.encode(), capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode()


def test_encode():
    assert _rle("encode", "aaab") == "3a1b"
    assert _rle("encode", "z" * 12) == "12z"


def test_decode():
    assert _rle("decode", "3a1b") == "aaab" and _rle("decode", "12z1 2é") == "z" * 12 + " éé"


def test_round_trip_with_newlines_and_unicode():
    for text in ["a\n\n\nb", "ééé  xyy", "", "q" * 130]:
        assert _rle("decode", _rle("encode", text)) == text
