import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/pairs.py': 'b7599730b2bcec9065eb72ed32764d0c76b62fd2ed885fae85c449986d75b66e'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import bisect
import random
import sys
from collections import defaultdict

LIMIT_S = 20


def _events(tmp_path, seed, n, users, span):
    rng = random.Random(seed)
    rows = [(f"u{rng.randrange(users):04d}", rng.randrange(span)) for _ in range(n)]
    path = tmp_path / f"events{seed}.csv"
    path.write_text("user,ts\n" + "".join(f"{u},{t}\n" for u, t in rows))
    return path, rows


def _reference(rows, window):
    times = defaultdict(list)
    for user, ts in rows:
        times[user].append(ts)
    counts = {}
    for user, ts in times.items():
        ts.sort()
        n = sum(i - bisect.bisect_left(ts, t - window, 0, i) for i, t in enumerate(ts))
        if n:
            counts[user] = n
    lines = [f"total {sum(counts.values())}"]
    lines += [f"{u} {c}" for u, c in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]]
    return "\n".join(lines) + "\n"


def _timed(path, window):
    start = time.monotonic()
    result = run(sys.executable, "/app/pairs.py", str(path), str(window), timeout=LIMIT_S + 10)
    return result, time.monotonic() - start


def test_medium_input(tmp_path):
    path, rows = _events(tmp_path, 1, 30_000, 400, 1_000_000)
    result, took = _timed(path, 600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _reference(rows, 600)
    assert took < LIMIT_S, took


def test_large_input_with_many_ties(tmp_path):
    path, rows = _events(tmp_path, 2, 120_000, 1500, 200_000)
    result, took = _timed(path, 30)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _reference(rows, 30)
    assert took < LIMIT_S, took


def test_zero_window(tmp_path):
    path, rows = _events(tmp_path, 3, 80_000, 50, 5_000)
    result, took = _timed(path, 0)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _reference(rows, 0)
    assert took < LIMIT_S, took
