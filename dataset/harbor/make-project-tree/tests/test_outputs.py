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


ROOT = Path("/app/project")


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_readme():
    assert (ROOT / "README.md").read_text() == "# Demo project\n"


def test_settings_content_and_mode():
    path = ROOT / "config/settings.ini"
    assert path.read_text() == "[server]\nport = 8080\ndebug = false\n"
    assert mode(path) == 0o600


def test_run_script():
    path = ROOT / "bin/run.sh"
    assert mode(path) == 0o755
    assert path.read_text().startswith("#!/bin/sh")
    result = run(str(path), timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "running on port 8080\n"


def test_logs_directory():
    logs = ROOT / "logs"
    assert logs.is_dir() and list(logs.iterdir()) == []
    assert mode(logs) == 0o700
