import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/join.py': '036d1ab52a14ae4e538cf5d1c914da3471a829fdf2d4f412f08d86867b1718d3'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import random
import sys
from collections import defaultdict

import pytest

LIMIT_S = 20


def _data(folder, seed, n_users, n_events, unknown_share):
    rng = random.Random(seed)
    countries = ["AR", "BE", "CL", "DE", "EE", "FR", "JP", "NZ", "unknownland"]
    users = {str(i): rng.choice(countries) for i in rng.sample(range(10**6), n_users)}
    ids = list(users)
    rows = []
    for _ in range(n_events):
        uid = str(rng.randrange(10**6, 2 * 10**6)) if rng.random() < unknown_share else rng.choice(ids)
        rows.append((uid, rng.choice(["view", "click", "buy"])))
    (folder / "users.csv").write_text("id,name,country\n" + "".join(f"{u},n{u},{c}\n" for u, c in users.items()))
    (folder / "events.csv").write_text("user_id,kind\n" + "".join(f"{u},{k}\n" for u, k in rows))
    report = defaultdict(lambda: [0, set()])
    for uid, _ in rows:
        country = users.get(uid, "unknown")
        report[country][0] += 1
        report[country][1].add(uid)
    order = sorted(c for c in report if c != "unknown") + (["unknown"] if "unknown" in report else [])
    return "".join(f"{c} {report[c][0]} {len(report[c][1])}\n" for c in order)


def _run(tmp_path, *args):
    expected = _data(tmp_path, *args)
    start = time.monotonic()
    try:
        result = run(sys.executable, "/app/join.py", str(tmp_path / "users.csv"), str(tmp_path / "events.csv"),
                     timeout=LIMIT_S + 10)
    except subprocess.TimeoutExpired:
        raise AssertionError("join.py ran past the time limit")
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, expected, time.monotonic() - start


def test_events_per_country(tmp_path):
    got, expected, took = _run(tmp_path, 1, 20_000, 150_000, 0.0)
    assert got == expected
    assert took < LIMIT_S, took


def test_unknown_users(tmp_path):
    got, expected, took = _run(tmp_path, 2, 15_000, 120_000, 0.2)
    assert got.splitlines()[-1].startswith("unknown ")
    assert got == expected
    assert took < LIMIT_S, took


def test_many_users_few_events_each(tmp_path):
    got, expected, took = _run(tmp_path, 3, 60_000, 100_000, 0.01)
    assert got == expected
    assert took < LIMIT_S, took
