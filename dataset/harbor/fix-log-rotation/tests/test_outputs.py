import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/readme.txt': 'b496f4f50d08e020cd3886cae10b41cd3cf55196a25e1cd809ff463ddba9a66c', '/app/rotate.sh': 'dcc507417c8a7165c949a625f73531a4e5351b6da4c81faa4e00c1c493fc7407'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _names(d):
    return sorted(p.name for p in Path(d).iterdir())


def _make(tmp_path, names, extra=("keep.txt",)):
    d = tmp_path / "logs"
    d.mkdir()
    for i, name in enumerate(names, 1):
        f = d / name
        f.write_text(str(i))
        os.utime(f, (1_700_000_000 + i * 60, 1_700_000_000 + i * 60))
    for name in extra:
        (d / name).write_text("not a log")
        os.utime(d / name, (1_600_000_000, 1_600_000_000))
    return d


def test_default_keeps_two(tmp_path):
    d = _make(tmp_path, [f"svc {i}.log" for i in range(1, 6)])
    assert run("/app/rotate.sh", str(d)).returncode == 0
    assert _names(d) == ["keep.txt", "svc 4.log", "svc 5.log"]


def test_keep_three_with_odd_names(tmp_path):
    names = ["-old.log", "b  c.log", "*.log", "d[1].log", "e f.log", "newest.log"]
    d = _make(tmp_path, names, extra=("notes.log.txt", "log", "x.LOG"))
    assert run("/app/rotate.sh", str(d), "3").returncode == 0
    assert _names(d) == sorted(["d[1].log", "e f.log", "newest.log", "notes.log.txt", "log", "x.LOG"])


def test_exactly_or_fewer_than_keep(tmp_path):
    d = _make(tmp_path, ["a.log", "b.log", "c.log"])
    assert run("/app/rotate.sh", str(d), "3").returncode == 0
    assert _names(d) == ["a.log", "b.log", "c.log", "keep.txt"]
    (tmp_path / "second").mkdir()
    e = _make(tmp_path / "second", ["x.log", "y.log"])
    assert run("/app/rotate.sh", str(e), "4").returncode == 0
    assert _names(e) == ["keep.txt", "x.log", "y.log"]
    (tmp_path / "third").mkdir()  # one more than KEEP: only the oldest goes (deleting nothing earns nothing here)
    f = _make(tmp_path / "third", ["p.log", "q.log", "r.log", "s.log"])
    assert run("/app/rotate.sh", str(f), "3").returncode == 0
    assert _names(f) == ["keep.txt", "q.log", "r.log", "s.log"]

def test_guard_still_a_bash_script():
    """The prompt asks for the bash script fixed: a stand-in in another language earns nothing."""
    import re

    text = Path('/app/rotate.sh').read_bytes().decode(errors="replace")  # no newline translation: a CR line fails
    assert text.split("\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash"), text[:80]
    assert run("bash", "-n", '/app/rotate.sh').returncode == 0
    assert not re.search(r"\b(python[0-9.]*|perl|ruby|node|php)\b", text), "another interpreter does the work"
