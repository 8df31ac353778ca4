import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/backups/README': '8dfef3faa531cad70736cb40ad8932ffb50887f5a8fffd209193b545c4e354ae', '/app/backups/backup-2025-11-20.tar.gz': '252f10c83610ebca1a059c0bae8255eba2f95be4d1d7bcfa89d7248a82d9f111', '/app/backups/backup-2025-12-31.tar.gz': '3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d', '/app/backups/backup-2026-01-02.tar.gz': '18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4', '/app/backups/backup-2026-01-15.tar.gz': 'ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb', '/app/backups/backup-2026-02-01.tar.gz': '2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6', '/app/backups/backup-2026-03-09.tar.gz': '3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea', '/app/backups/backup-notes.txt': '34529327b0a04a859dae2ad318cd40cb3324a6d2b7b11a4da37cc769222b873a'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _names():
    return sorted(p.name for p in Path("/app/backups").iterdir())


def test_oldest_removed_despite_its_new_mtime():
    assert "backup-2025-11-20.tar.gz" not in _names()


def test_2025_12_31_removed():
    assert "backup-2025-12-31.tar.gz" not in _names()


def test_2026_01_02_removed():
    assert "backup-2026-01-02.tar.gz" not in _names()


def test_newest_and_other_files_kept():
    for name in ["backup-2026-01-15.tar.gz", "backup-2026-02-01.tar.gz", "backup-2026-03-09.tar.gz",
                 "README", "backup-notes.txt"]:
        assert unchanged("/app/backups/" + name), name
