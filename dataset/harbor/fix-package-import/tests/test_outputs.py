import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/app/formatting.py': '5497d9c6a50109d5ab00aaadb0cd30ad16f16f86ea161f8b58c70e95e73a56ca', '/app/app/helpers.py': 'c1d37ec92c57a6fd0066ecd644cf034236e07a451e4457af7ed68a15cd3d4f13', '/app/app/main.py': '3047dd0abfdcf6d946597c778af11207678a59c0a4e85969de85183df4d05970'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def test_app_runs():
    result = run("python3", "-m", "app.main", cwd="/app")
    assert result.returncode == 0, result.stderr


def test_output():
    result = run("python3", "-m", "app.main", cwd="/app")
    assert result.stdout == "Hello, World!\n"


def test_title_case_kept():
    result = run("python3", "-c", "from app.helpers import greet; print(greet('ada lovelace'))", cwd="/app")
    assert result.stdout.strip() == "Hello, Ada Lovelace!"
