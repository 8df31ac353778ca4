import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/reporter/reporter/__init__.py': '6b2ed0ef6b608b2e7c85a9a2c83d5d02ca23f4b5f01d939296835a82ba0fc4ea', '/app/reporter/reporter/__main__.py': '31efbc06e7515479889f4072a7fcc0b32e56091c9d945353d28a05d02298b1a2', '/app/shared-libs/colfmt/LICENSE': '4f22a06164d7ad89d3cba50f71fc1efea2f4a235c96c91a2eb26ff1629d2665a', '/app/shared-libs/colfmt/__init__.py': '454c9bde6715063fd2037545482eeb6d6a36c3f6d687ed6fc041eeb26c8a17d3', '/app/shared-libs/colfmt/render.py': 'ecbac7cbf00b15aef6744355cd0f40125e32d4b6d929e6fdee4d340b86bc5a58', '/app/shared-libs/colfmt/widths.py': '810878fed1fb02b1e40ea9a0b94c8fd8b962b7cedb845bd58e8d9b9adddb2f56'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import csv
import random
import sys

DRIVER = """
import runpy, sys
sys.argv = ["reporter", sys.argv[1]]
try:
    runpy.run_module("reporter", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print("MODULES", sorted(m for m in sys.modules if "colfmt" in m))
"""


def _csv(tmp_path, seed):
    rng = random.Random(seed)
    rows = [["name", "qty", "price", "note"]]
    for _ in range(25):
        rows.append([rng.choice(["bolt", "nut", "washer", "gear"]) + str(rng.randrange(99)), str(rng.randrange(10000)),
                     f"{rng.uniform(0, 500):.2f}", rng.choice(["", "rush", "n/a", "x" * rng.randrange(12)])])
    path = tmp_path / f"in{seed}.csv"
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _expected(path):
    env = dict(os.environ, PYTHONPATH="/app/shared-libs")
    code = "import csv, sys; from colfmt import render; sys.stdout.write(render([r for r in csv.reader(open(sys.argv[1], newline='')) if r]))"
    return subprocess.run([sys.executable, "-I", "-c", code.replace("import csv", "import sys; sys.path.insert(0, '/app/shared-libs'); import csv"), str(path)],
                          capture_output=True, text=True, env=env, timeout=30).stdout


def _deployed(*args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd="/app/reporter", env=env, timeout=30)


def test_runs_without_shared_libs(tmp_path):
    for seed in (1, 2):
        path = _csv(tmp_path, seed)
        expected = _expected(path)
        assert expected.count("\n") == 26
        result = _deployed("-m", "reporter", str(path))
        assert result.returncode == 0, result.stderr
        assert result.stdout == expected


def test_only_the_vendored_copy_is_imported(tmp_path):
    path = _csv(tmp_path, 3)
    result = _deployed("-c", DRIVER, str(path))
    assert result.returncode == 0, result.stderr
    modules = result.stdout.splitlines()[-1]
    assert "'reporter._vendor.colfmt.render'" in modules and "'reporter._vendor.colfmt.widths'" in modules, modules
    assert "'colfmt'" not in modules and "'colfmt." not in modules, modules


def test_vendor_record():
    vendored = Path("/app/reporter/reporter/_vendor")
    assert (vendored / "colfmt" / "LICENSE").read_bytes() == Path("/app/shared-libs/colfmt/LICENSE").read_bytes()
    lines = [line.strip() for line in (vendored / "vendor.txt").read_text().splitlines()]
    assert "colfmt==2.1.0" in lines


def test_shared_libs_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/shared-libs/"):
            assert unchanged(path), path
