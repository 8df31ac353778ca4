import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/orders.csv': 'd4ad04c337bff80f1390a9cbc11b196b6aef63245511cc683fc4e30190d4f47f', '/app/report.py': '8b4d79ecdaca045fdb7248b62c5da925f3d0de1df729c43a485f85bf1e11c8e2'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def test_runs_on_the_orders():
    import re

    result = run("python3", "/app/report.py")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines and all(re.fullmatch(r".+: [0-9]+\.[0-9]{2}", line) for line in lines), lines


def test_totals():
    result = run("python3", "/app/report.py")
    assert result.stdout.splitlines() == ["Bo: 7.00", "Chen: 18.40", "Smith, Anna: 15.50"]


def test_other_file(tmp_path):
    data = tmp_path / "o.csv"
    data.write_text('customer,item,amount\n"Z, z",x,1\nA,"y, y",2.5\nA,q,0.25\n')
    result = run("python3", "/app/report.py", str(data))
    assert result.stdout.splitlines() == ["A: 2.75", "Z, z: 1.00"]


def test_orders_unchanged():
    assert unchanged("/app/orders.csv")
