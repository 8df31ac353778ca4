import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/charcount.py': '824978f0c4f7870674c5dd256065b965ea12ef9c0dabe4a2b363f733de8a004d', '/app/greek.txt': 'f93622bd2458bb583cbbd7648651ae9974a0e8979fc88e9bdd757e8b503ba809'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _run(path):
    result = run("python3", "/app/charcount.py", str(path))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_sample():
    assert _run("/app/greek.txt") == ["chars=35", "lines=3"]


def test_other_scripts_and_crlf(tmp_path):
    f = tmp_path / "a.txt"
    f.write_bytes("€ 10\r\n😀 ok\r\nплан\n".encode("utf-8"))
    assert _run(f) == ["chars=17", "lines=3"]


def test_empty_and_no_final_newline(tmp_path):
    empty = tmp_path / "e.txt"
    empty.write_text("")
    assert _run(empty) == ["chars=0", "lines=0"]
    f = tmp_path / "n.txt"
    f.write_text("ü\nß", encoding="utf-8")
    assert _run(f) == ["chars=3", "lines=1"]
