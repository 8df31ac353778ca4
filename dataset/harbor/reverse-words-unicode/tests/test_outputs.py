import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/phrases.txt': '214aa560a7691882e99635e7a1b58084c2ab17da32b64212d8849c2308382578'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _lines():
    return Path("/app/reversed.txt").read_text(encoding="utf-8").split("\n")


def test_ascii_line():
    assert _lines()[0] == "world wide hello"


def test_unicode_lines():
    lines = _lines()
    assert lines[2] == "là et çà" and lines[3] == "京都 大阪 東京" and lines[5] == "done 🎉 👍 ok"


def test_whole_file():
    assert _lines() == ["world wide hello", "", "là et çà", "京都 大阪 東京", "solo", "done 🎉 👍 ok", ""]
