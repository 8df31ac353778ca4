import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/backup.sh': '1787f19450875b8db4098ce4c343cbba3d0e9fff029006dd759d0b2c7a32bfbc', '/app/docs/-draft.txt': 'f8359416cedbf4b44bd1cab71b791b4121e3b33748187c530e70207af87c3f39', '/app/docs/meeting notes.txt': '444e0fffbd825e9610ff5b199485707a0c895339ae80c15cc8a8aee41b106fda', '/app/docs/plan.txt': '1b4025dc7b8d27cf38df85e77b20ed44a00851a2c28b338560560d85deded8e3', '/app/docs/q1  report.md': '4c0d95c5689a54836c5cb297abc2e5f55cd04f42a5ecf955b64f61fb09881a92'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import shutil

DOCS = ["plan.txt", "meeting notes.txt", "q1  report.md", "-draft.txt"]


def test_docs_unchanged():
    assert sorted(p.name for p in Path("/app/docs").iterdir()) == sorted(DOCS)
    assert all(unchanged(f"/app/docs/{d}") for d in DOCS)


def test_backups_made():
    for d in DOCS:
        assert Path("/app/backup", d + ".bak").read_bytes() == Path("/app/docs", d).read_bytes(), d


def _run_with_extra(names):
    shutil.rmtree("/app/backup", ignore_errors=True)
    for name in names:
        Path("/app/docs", name).write_text(f"content of {name}\n")
    try:
        result = run("bash", "/app/backup.sh")
        assert result.returncode == 0, result.stderr
        for name in DOCS + names:
            assert Path("/app/backup", name + ".bak").read_bytes() == Path("/app/docs", name).read_bytes(), name
        assert sorted(p.name for p in Path("/app/backup").iterdir()) == sorted(d + ".bak" for d in DOCS + names)
    finally:
        for name in names:
            Path("/app/docs", name).unlink()


def test_script_handles_new_spaced_names():
    _run_with_extra(["new  file.txt", " leading.txt", "tab\there.txt"])


def test_script_handles_dashes_and_globs():
    _run_with_extra(["-n", "*.txt", "[ab].md"])
