import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/work/docs/changed.md': '7f8b1dfc466b6249f06cbe55c9174df2578e7754da793fded244ef5cba2a38f1', '/app/work/docs/old notes.md': '54d048ab0699bcf1fff66455775c49a538241b098d9aad8b9ae35eba96528201', '/app/work/new dir/fresh file.txt': '02db0d2659c9d48bc15f81a388594fc0e3cf4c780fdc27ea21e0671afc37de19', '/app/work/old.txt': '01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee', '/app/work/src/app.py': '8a8f60ecb09b7e64c6d5214a8043865e608507db8c3f61f995eae6d078875901'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


CHANGED = {"docs/changed.md": "changed\n", "new dir/fresh file.txt": "fresh\n", "src/app.py": "app\n"}


def _copied():
    root = Path("/app/incremental")
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_changed_files_copied():
    for rel, content in CHANGED.items():
        assert Path("/app/incremental", rel).read_text() == content, rel


def test_nothing_else_copied():
    assert _copied() == set(CHANGED)
    for rel, content in CHANGED.items():  # empty stand-ins are not copies
        assert Path("/app/incremental", rel).read_text() == content, rel


def test_times_kept_and_marker_moved():
    for rel in CHANGED:
        assert int(os.stat(Path("/app/incremental", rel)).st_mtime) == int(os.stat(Path("/app/work", rel)).st_mtime)
    assert os.stat("/app/last_backup").st_mtime > os.stat("/app/work/src/app.py").st_mtime
