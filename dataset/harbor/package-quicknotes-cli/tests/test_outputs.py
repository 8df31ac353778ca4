import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/quicknotes/notes.py': '54e2158e5796666a211d68f6447e532e5614f233183b91fd67d44279ff870fdb', '/app/quicknotes/store.py': 'da24bad958cd749cf665ee1630868c3258b352d96a437c7bb12a64977712cbbd'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import sys

PY = sys.executable


def _qn(tmp_path, *args, module=False):
    env = dict(os.environ, QUICKNOTES_FILE=str(tmp_path / "notes.json"), HOME=str(tmp_path))
    env.pop("PYTHONPATH", None)
    command = [PY, "-m", "quicknotes", *args] if module else ["qn", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=str(tmp_path), env=env)


def test_distribution_metadata():
    code = ("import importlib.metadata as m; print(m.version('quicknotes')); "
            "print([e.value for e in m.entry_points(group='console_scripts') if e.name == 'qn'])")
    result = run(PY, "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    version, points = result.stdout.splitlines()
    assert version == "0.3.0"
    assert points.startswith("['quicknotes"), points


def test_qn_command(tmp_path):
    assert _qn(tmp_path, "add", "buy milk").returncode == 0
    assert _qn(tmp_path, "add", "Call Bob").returncode == 0
    assert _qn(tmp_path, "add", "bobsleigh tickets").returncode == 0
    assert _qn(tmp_path, "list").stdout == "1 buy milk\n2 Call Bob\n3 bobsleigh tickets\n"
    assert _qn(tmp_path, "search", "BOB").stdout == "2 Call Bob\n3 bobsleigh tickets\n"
    assert _qn(tmp_path, "remove", "1").returncode == 0
    assert _qn(tmp_path, "list").stdout == "1 Call Bob\n2 bobsleigh tickets\n"
    assert _qn(tmp_path, "remove", "9").returncode == 1


def test_python_m_quicknotes(tmp_path):
    assert _qn(tmp_path, "add", "via module", module=True).returncode == 0
    result = _qn(tmp_path, "list", module=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1 via module\n"


def test_regular_install_of_the_package():
    code = "import quicknotes.store, quicknotes.cli; print(quicknotes.store.__file__); print(quicknotes.cli.__file__)"
    result = run(PY, "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    files = result.stdout.split()
    assert len(files) == 2 and not any(f.startswith("/app/") for f in files), files
