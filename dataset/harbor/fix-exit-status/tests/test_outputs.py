import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/a.txt': 'a6e2b7a040683432de03a18fd8a1939a2fdf82585b364bfc874bdd4095c4cae1', '/app/b.txt': '73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac', '/app/check.sh': '01dc03b44e53948f1f7e4201097eed7f7502366f92a69cbc408b2c08145fed75'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def test_good_files_unchanged_output():
    result = run("/app/check.sh", "/app/a.txt", "/app/b.txt")
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["/app/a.txt 2", "/app/b.txt 1", "all ok"]


def test_missing_file_fails():
    result = run("/app/check.sh", "/app/a.txt", "/app/nope.txt", "/app/b.txt")
    assert result.returncode != 0


def test_stops_at_the_first_failure():
    result = run("/app/check.sh", "/app/a.txt", "/app/nope.txt", "/app/b.txt")
    assert "all ok" not in result.stdout and "/app/b.txt" not in result.stdout
    assert result.stdout.splitlines()[:1] == ["/app/a.txt 2"]


def test_directory_argument_fails(tmp_path):
    result = run("/app/check.sh", str(tmp_path), "/app/a.txt")
    assert result.returncode != 0 and "all ok" not in result.stdout and "/app/a.txt" not in result.stdout

def test_guard_still_a_bash_script():
    """The prompt asks for the bash script fixed: a stand-in in another language earns nothing."""
    import re

    text = Path('/app/check.sh').read_bytes().decode(errors="replace")  # no newline translation: a CR line fails
    assert text.split("\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash"), text[:80]
    assert run("bash", "-n", '/app/check.sh').returncode == 0
    assert not re.search(r"\b(python[0-9.]*|perl|ruby|node|php)\b", text), "another interpreter does the work"
