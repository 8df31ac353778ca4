import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/bin/tool': 'ec9fa77e349710f5ce2cecd7e2a0464b59ecbea86acafb4fdd4bdf903963dd22'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def test_runs():
    result = run("/app/bin/tool")
    assert result.returncode == 0 and result.stdout.strip() == "tool version 1.2"


def test_executable_by_others():
    mode = stat.S_IMODE(os.stat("/app/bin/tool").st_mode)
    assert mode & 0o111 == 0o111 and mode & 0o444 == 0o444


def test_runs_as_another_user():
    result = subprocess.run(["/app/bin/tool"], capture_output=True, text=True, timeout=30, user=65534, group=65534,
                            extra_groups=[], cwd="/")
    assert result.returncode == 0 and result.stdout.strip() == "tool version 1.2", result.stderr


def test_not_world_writable_and_unchanged():
    mode = stat.S_IMODE(os.stat("/app/bin/tool").st_mode)
    assert not mode & 0o002 and unchanged("/app/bin/tool")
