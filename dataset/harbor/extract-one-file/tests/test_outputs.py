import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/project/README.md': '191647fe7e0588f9c90c3a70ff178b7188c2d5cbfbbae76f7ddc1af2d332ab71', '/app/project/config/app.ini': 'fa8c3591c2de4a831f567df66d9c49188bcfa81b5ec747d43fc5e972d8fc164f', '/app/project/src/main.py': 'caf026f25d7140209f98072605307a438914b9ce6f3c14b23d15d9667241de52', '/app/project/src/util.py': '0abae1e0ae728216ee44993c5a3a755f8b1c387d947fc4c4f72cab0e4a84214b'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import tarfile

RESTORED = Path("/app/restore/project/config/app.ini")


def test_content():
    assert RESTORED.read_text() == "[app]\nname = demo\n"


def test_nothing_else():
    assert RESTORED.read_text() == "[app]\nname = demo\n"
    files = [p for p in Path("/app/restore").rglob("*") if p.is_file() or p.is_symlink()]
    assert [str(p) for p in files] == [str(RESTORED)]


def test_modification_time_kept():
    with tarfile.open("/app/backups/project.tar.gz") as archive:
        recorded = archive.getmember("project/config/app.ini").mtime
    assert int(RESTORED.stat().st_mtime) == recorded


def test_archive_intact():
    with tarfile.open("/app/backups/project.tar.gz") as archive:
        assert sorted(m.name for m in archive.getmembers() if m.isfile()) == [
            "project/README.md", "project/config/app.ini", "project/src/main.py", "project/src/util.py"]
