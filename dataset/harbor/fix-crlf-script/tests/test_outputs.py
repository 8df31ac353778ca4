import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/input.txt': '880553fca8fcea94e325ee2cfb48e5a985cc797f39a14cc6d3cedecfeb2ae4d2', '/app/run.sh': '37b0005f0666f7840a12d293e716f8ef6b77aef725b8312aaed37a15082d97d1'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _with_input(text):
    original = Path("/app/input.txt").read_bytes()
    try:
        Path("/app/input.txt").write_text(text)
        return run("/app/run.sh")
    finally:
        Path("/app/input.txt").write_bytes(original)


def test_runs():
    import random

    count = random.randrange(4, 60)
    result = _with_input("".join(f"row {i}\n" for i in range(count)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["start", str(count), "done"], result.stdout


def _counts(text, count):
    result = _with_input(text)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["start", count, "done"], (text, result.stdout)


def test_counts_the_current_input():
    _counts("".join(f"line {i}\n" for i in range(17)), "17")
    _counts("", "0")


def test_counts_newlines_as_wc_does():
    _counts("x\ny\nno final newline", "2")


def test_guard_no_carriage_returns_left():
    data = Path("/app/run.sh").read_bytes()
    assert data.startswith(b"#!") and b"\r" not in data

def test_guard_still_a_bash_script():
    """The prompt asks for the bash script fixed: a stand-in in another language earns nothing."""
    import re

    text = Path('/app/run.sh').read_bytes().decode(errors="replace")  # no newline translation: a CR line fails
    assert text.split("\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash"), text[:80]
    assert run("bash", "-n", '/app/run.sh').returncode == 0
    assert not re.search(r"\b(python[0-9.]*|perl|ruby|node|php)\b", text), "another interpreter does the work"
