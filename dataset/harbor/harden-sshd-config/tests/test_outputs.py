import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/sshd_config': '43f5502573d2f0ae24ea66fa26028654f1e984df3afc53f0ba562600fdc659f4'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _global_lines():
    lines = Path("/app/sshd_config").read_text().splitlines()
    end = next((i for i, l in enumerate(lines) if l.strip().startswith("Match")), len(lines))
    return [l.strip() for l in lines[:end] if l.strip() and not l.strip().startswith("#")], lines[end:]


def test_root_login_disabled():
    active, _ = _global_lines()
    assert [l for l in active if l.split()[0] == "PermitRootLogin"] == ["PermitRootLogin no"]


def test_passwords_disabled():
    active, _ = _global_lines()
    assert [l for l in active if l.split()[0] == "PasswordAuthentication"] == ["PasswordAuthentication no"]


def test_match_block_kept():
    active, match = _global_lines()
    assert "PasswordAuthentication no" in active
    assert match == ["Match User backup", "    PasswordAuthentication yes"]


def test_other_settings_kept():
    active, _ = _global_lines()
    others = [l for l in active if l.split()[0] not in ("PermitRootLogin", "PasswordAuthentication")]
    assert others == ["Port 22", "UsePAM yes", "X11Forwarding yes"]
