import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/count_admins.sh': '68cbd6dd71834610d7003104ab163603cb7959ef51af2b49401153f7004d4d44', '/app/users.txt': '090cf5f0ac8ba11b50c3040a85b217f82dd2ea775f23d54d82a854ebb0e41e44'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _count_of(text):
    original = Path("/app/users.txt").read_bytes()
    try:
        Path("/app/users.txt").write_text(text)
        result = run("/app/count_admins.sh")
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()
    finally:
        Path("/app/users.txt").write_bytes(original)


def test_sample_count():
    result = run("/app/count_admins.sh")
    assert result.returncode == 0 and result.stdout.strip() == "4"


def test_last_line_without_newline():
    assert _count_of("admin:a\nuser:b\nadmin:c") == "2"
    assert _count_of("guest:x\nadmin:only") == "1"


def test_indented_lines_do_not_count():
    assert _count_of("admin:a\n  admin:b\n\tadmin:c\nadmin:d\n") == "2"
    assert _count_of("") == "0"


def test_guard_still_a_bash_script():
    """The prompt says to keep it a bash script: a stand-in in another language earns nothing."""
    text = Path("/app/count_admins.sh").read_text()
    assert text.split("\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash")
    assert run("bash", "-n", "/app/count_admins.sh").returncode == 0
