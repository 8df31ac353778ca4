import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/uniq/Makefile': 'bfcf2cde7285b2a18e26c00202ec5e48b77708494d890553305f2471952c6c2b', '/app/uniq/uniqcount.c': 'c68e57ad9bd6895f359977ecc2b127d63d2b8a1f3b508a62e5b3887af85cb0a1'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import random
from collections import Counter

LIMIT_S = 15


def _build():
    """Build a fresh copy of /app/uniq with its Makefile (every target remade) and return the program: a stand-in
    put at /app/uniq/uniqcount (a script in another language) is never what runs; the C source is."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="uniq-build-")) / "uniq"
    shutil.copytree("/app/uniq", folder, symlinks=True)
    (folder / "uniqcount").unlink(missing_ok=True)
    result = run("make", "-B", "-C", str(folder), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    program = folder / "uniqcount"
    assert program.read_bytes()[:4] == b"\x7fELF", "make must build the C program, not install a stand-in"
    return str(program)


def _expected(data):
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    counts = Counter(lines)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return b"".join(b"%d\t%s\n" % (c, l) for l, c in ranked)


def _timed(data):
    program = _build()
    start = time.monotonic()
    result = subprocess.run([program], input=data, capture_output=True, timeout=LIMIT_S + 15)
    return result, time.monotonic() - start


def test_many_distinct_lines():
    rng = random.Random(1)
    data = "".join(f"key-{rng.randrange(150_000)}\n" for _ in range(400_000)).encode()
    result, took = _timed(data)
    assert result.returncode == 0
    assert result.stdout == _expected(data)
    assert took < LIMIT_S, took


def test_long_lines():
    rng = random.Random(2)
    parts = ["x" * rng.choice([10, 1100, 2500, 6000]) + str(rng.randrange(20_000)) for _ in range(30_000)]
    parts += ["y" * 300_000 + str(k % 3) for k in range(6)]
    rng.shuffle(parts)
    data = ("\n".join(parts) + "\n").encode()
    result, took = _timed(data)
    assert result.returncode == 0
    assert result.stdout == _expected(data)
    assert took < LIMIT_S, took


def test_blank_lines_and_no_final_newline():
    rng = random.Random(3)
    parts = [rng.choice(["", " ", "a b", "\tz"]) + str(rng.randrange(100_000)) * rng.randrange(2) for _ in range(300_000)]
    data = "\n".join(parts).encode()
    result, took = _timed(data)
    assert result.returncode == 0
    assert result.stdout == _expected(data)
    assert took < LIMIT_S, took
