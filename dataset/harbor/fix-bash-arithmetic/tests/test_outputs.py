import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/sum.sh': 'e9149e67fa8fec776e233de6caecd533d3eb1ce052b7c99dc73e77c11922b896'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def test_simple():
    import random

    assert run("/app/sum.sh", "1", "2", "3").stdout.strip() == "sum: 6"
    numbers = [random.randrange(1, 500) for _ in range(random.randrange(2, 7))]
    assert run("/app/sum.sh", *map(str, numbers)).stdout.strip() == f"sum: {sum(numbers)}"


def test_one_or_no_argument():
    assert run("/app/sum.sh", "42").stdout.strip() == "sum: 42"
    assert run("/app/sum.sh").stdout.strip() == "sum: 0"


def test_negative_and_large():
    assert run("/app/sum.sh", "-5", "100000", "7").stdout.strip() == "sum: 100002"

def test_guard_still_a_bash_script():
    """The prompt asks for the bash script fixed: a stand-in in another language earns nothing."""
    import re

    text = Path('/app/sum.sh').read_bytes().decode(errors="replace")  # no newline translation: a CR line fails
    assert text.split("\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash"), text[:80]
    assert run("bash", "-n", '/app/sum.sh').returncode == 0
    assert not re.search(r"\b(python[0-9.]*|perl|ruby|node|php)\b", text), "another interpreter does the work"
