import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/sum_column.sh': '84400b2c0c4fc949ce09b069eccc6edfdbe2f923be8e7bead552c655c11961b5'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import functools
import random
import tempfile


@functools.lru_cache(maxsize=None)
def _big():
    """One run on a fresh 200,000-line file (shared by the tests): (result or None when it took over 20 s, sum)."""
    rng = random.Random(11)
    values = [rng.randrange(-1000, 1000) for _ in range(200_000)]
    path = Path(tempfile.mkdtemp()) / "big.txt"
    path.write_text("".join(f"n{i} {v}\n" for i, v in enumerate(values)))
    try:
        return run("/app/sum_column.sh", str(path), timeout=20), sum(values)
    except subprocess.TimeoutExpired:
        return None, sum(values)


def _sum(tmp_path, text):
    result, _ = _big()
    assert result is not None, "sum_column.sh still takes over 20 s on 200,000 lines"
    f = tmp_path / "in.txt"
    f.write_text(text)
    result = run("/app/sum_column.sh", str(f))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_small(tmp_path):
    assert _sum(tmp_path, "a 1\nb -5\nc 10\n") == "6"
    assert _sum(tmp_path, "a -7\nb -5\n") == "-12"


def test_big_file_fast():
    result, expected = _big()
    assert result is not None, "sum_column.sh still takes over 20 s on 200,000 lines"
    assert result.returncode == 0 and result.stdout.strip() == str(expected)


def test_empty_file(tmp_path):
    assert _sum(tmp_path, "") == "0"

def test_guard_still_a_bash_script():
    """The prompt asks for the bash script fixed: a stand-in in another language earns nothing."""
    import re

    text = Path('/app/sum_column.sh').read_bytes().decode(errors="replace")  # no newline translation: a CR line fails
    assert text.split("\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash"), text[:80]
    assert run("bash", "-n", '/app/sum_column.sh').returncode == 0
    assert not re.search(r"\b(python[0-9.]*|perl|ruby|node|php)\b", text), "another interpreter does the work"
