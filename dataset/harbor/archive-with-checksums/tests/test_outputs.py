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


import hashlib
import tarfile

FILES = ["project/README.md", "project/config/app.ini", "project/src/main.py", "project/src/util.py"]


def test_archive_members():
    with tarfile.open("/app/release.tar.gz") as archive:
        names = sorted(m.name.removeprefix("./") for m in archive.getmembers() if m.isfile())
    assert names == FILES


def test_manifest_verifies():
    result = run("sha256sum", "-c", "SHA256SUMS", cwd="/app")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(l.rsplit(": ", 1)[0] for l in result.stdout.splitlines() if l.endswith(": OK")) == FILES


def test_manifest_format_sorted():
    lines = Path("/app/SHA256SUMS").read_text().splitlines()
    expected = [hashlib.sha256(Path("/app", f).read_bytes()).hexdigest() + "  " + f for f in FILES]
    assert lines == expected
