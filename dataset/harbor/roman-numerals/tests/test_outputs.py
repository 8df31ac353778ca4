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


def _run(arg):
    return run("python3", "/app/roman.py", arg)


def test_to_roman():
    assert [_run(str(n)).stdout.strip() for n in (1, 4, 9, 14, 40, 90, 400, 1994, 3999)] == [
        "I", "IV", "IX", "XIV", "XL", "XC", "CD", "MCMXCIV", "MMMCMXCIX"]


def test_from_roman():
    assert [_run(r).stdout.strip() for r in ("III", "LVIII", "MCMXCIV", "MMXXVI")] == ["3", "58", "1994", "2026"]


def test_round_trip():
    import random

    for n in random.Random(7).sample(range(1, 4000), 30):
        assert _run(_run(str(n)).stdout.strip()).stdout.strip() == str(n)


def test_invalid_input():
    assert Path("/app/roman.py").is_file()
    valid = _run("3999")
    assert valid.returncode == 0 and valid.stdout.strip() == "MMMCMXCIX"
    for arg in ("0", "4000", "IIII", "IC", "mcm", "ABC", "-3"):
        result = _run(arg)
        assert result.returncode == 2 and result.stdout == "" and result.stderr.strip(), arg
        assert "can't open file" not in result.stderr, result.stderr
