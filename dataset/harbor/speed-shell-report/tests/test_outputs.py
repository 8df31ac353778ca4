import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/report.sh': '56de203817b297f6bd11b8d2c989eff28bca0bb2762fecf8e93c4401255dd1ba'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import random
from collections import Counter, defaultdict

import pytest

LIMIT_S = 20


def _log(path, seed, n):
    rng = random.Random(seed)
    paths = [f"/{a}/{b}" for a in ("api", "static", "img", "docs") for b in range(60)] + ["/"]
    lines = []
    for i in range(n):
        p = rng.choice(paths)
        query = f"?q={rng.randrange(99)}&x=1" if rng.random() < 0.3 else ""
        status = rng.choice([200, 200, 200, 200, 304, 404, 500, 201, 302])
        size = "-" if status in (304, 302) or rng.random() < 0.05 else str(rng.randrange(20, 90_000))
        ip = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}"
        method = rng.choice(["GET", "GET", "POST", "HEAD"])
        lines.append(f'{ip} - - [02/Dec/2026:01:{i % 60:02d}:{i % 59:02d} +0000] "{method} {p}{query} HTTP/1.1" {status} {size}\n')
    path.write_text("".join(lines))
    statuses, total, per_path = Counter(), 0, defaultdict(int)
    for line in lines:
        fields = line.split()
        statuses[fields[8]] += 1
        size = 0 if fields[9] == "-" else int(fields[9])
        total += size
        per_path[fields[6].split("?")[0]] += size
    out = [f"requests {n}"] + [f"status {code} {count}" for code, count in sorted(statuses.items(), key=lambda kv: int(kv[0]))]
    out.append(f"bytes {total}")
    out += [f"top {p} {b}" for p, b in sorted(per_path.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("log") / "access.log"
    expected = _log(path, 8, 40_000)
    start = time.monotonic()
    try:
        result = run("bash", "/app/report.sh", str(path), timeout=LIMIT_S + 10)
    except subprocess.TimeoutExpired:
        return None, expected, None
    return result, expected, time.monotonic() - start


def _lines(report):
    result, expected, took = report
    assert result is not None, "report.sh ran past the time limit"
    assert result.returncode == 0, result.stderr[-2000:]
    assert took < LIMIT_S, took
    return result.stdout.splitlines(), expected


def test_request_and_status_counts(report):
    got, expected = _lines(report)
    assert [l for l in got if l.startswith(("requests ", "status "))] == [l for l in expected if l.startswith(("requests ", "status "))]


def test_total_bytes(report):
    got, expected = _lines(report)
    assert [l for l in got if l.startswith("bytes ")] == [l for l in expected if l.startswith("bytes ")]


def test_top_paths(report):
    got, expected = _lines(report)
    assert [l for l in got if l.startswith("top ")] == [l for l in expected if l.startswith("top ")]
    assert got == expected


def test_still_a_bash_script():
    text = Path("/app/report.sh").read_text()
    assert text.startswith("#!/bin/bash")
    assert "python" not in text
