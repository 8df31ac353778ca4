import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/tally/Makefile': '07c9155774be95f675803128cb4b5dfd1a6365bbea806c1f2e329439286f5f28', '/app/tally/include/tally.h': '086e26982b7277d4fe390c364469327ecfae965476183b78865990ace3052e56', '/app/tally/src/main.c': 'de00dfffa545a4b670236d97e223ea7de16b69f41f8255028e1f32d1566ea273', '/app/tally/src/parse.c': '6bb5c7086a32fe38fa1a68fcedb5635e891e62bedb57d5d29ecc57ff26db25c8', '/app/tally/src/stats.c': 'b6b4f66e096ba21e9ba656ddc4fb3f3dbc0cc4ffcd87b930dbd1b8b6f612fedf', '/app/tally/tests/cases/fractions.in': 'e4b78c4585a0af18ea971fd3b5d6ca95709c5b8ddef8ddc0e296c4b431c297e5', '/app/tally/tests/cases/fractions.out': 'd8e37857c1289cd24d8289e639a88a27b4e477821e5227960348d3630003d9da', '/app/tally/tests/cases/ints.in': '38f4b87ae55429a68261a78885ab62dd0af65afca01d36b21be7e9abdeaf83ee', '/app/tally/tests/cases/ints.out': 'e291be1bb5943653b706060df08765e0f91a1fca8a4ed7bfa44d0e5a8b554c26', '/app/tally/tests/run.sh': '95899f2a9ddb4435c4390637a38231c1e571ff8ecc9cca04243ed7914709c145'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import random
import statistics


def _build():
    run("make", "-C", "/app/tally", "clean", timeout=60)
    return run("make", "-C", "/app/tally", timeout=120)


def _expected(values):
    mean = sum(values) / len(values)
    return (f"count {len(values)}\nmin {min(values):.2f}\nmax {max(values):.2f}\n"
            f"mean {mean:.2f}\nmedian {statistics.median(values):.2f}\n")


def _tally(text):
    return run("/app/tally/tally", input=text, timeout=30)


def test_project_builds():
    result = _build()
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.access("/app/tally/tally", os.X_OK)


def test_whole_numbers():
    _build()
    rng = random.Random(7)
    values = [float(rng.randrange(-500, 500)) for _ in range(301)]
    result = _tally("".join(f"{int(v)}\n" for v in values))
    assert result.returncode == 0, result.stderr
    assert result.stdout == _expected(values)


def test_fractional_median():
    _build()
    rng = random.Random(11)
    for size in (40, 41):
        values = [round(rng.uniform(0, 3), 3) for _ in range(size)]
        result = _tally("".join(f"{v}\n" for v in values))
        assert result.returncode == 0, result.stderr
        assert result.stdout == _expected(values)


def test_bad_line_is_reported():
    _build()
    result = _tally("1\n2\n# note\nthree\n4\n")
    assert result.returncode == 2
    assert "line 4" in result.stderr
    ok = _tally("  7  # seven\n\n2\n")
    assert ok.returncode == 0 and ok.stdout.startswith("count 2\n")


def test_make_test_passes():
    _build()
    result = run("make", "-C", "/app/tally", "test", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   tests/cases/fractions.in" in result.stdout


def test_suite_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/tally/tests/"):
            assert unchanged(path), path
