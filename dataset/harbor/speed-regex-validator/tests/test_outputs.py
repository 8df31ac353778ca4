import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/validate.py': '814ecd1b1ce4dfa7de35000327771696b08df56c8aac4a40033765d990c39908'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import random
import re
import sys

LIMIT_S = 15
SAFE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
SAFE_EMAIL = re.compile(r"[a-zA-Z0-9]+(?:[._][a-zA-Z0-9]+)*[._]?@(?:[a-z0-9]+\.)+[a-z]{2,}\Z")


def _ok(line):
    kind, _, value = line.partition(":")
    pattern = {"id": SAFE_ID, "email": SAFE_EMAIL}.get(kind)
    return bool(pattern and pattern.match(value))


def _expected(lines):
    out, good = [], 0
    for number, line in enumerate(lines, 1):
        good += _ok(line)
        out.append(f"{number} {'ok' if _ok(line) else 'bad'}")
    return "\n".join(out + [f"ok {good}", f"bad {len(lines) - good}"]) + "\n"


def _check(tmp_path, lines):
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in lines))
    start = time.monotonic()
    try:
        result = run(sys.executable, "/app/validate.py", str(path), timeout=LIMIT_S + 10)
    except subprocess.TimeoutExpired:
        raise AssertionError("validate.py ran past the time limit")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout == _expected(lines)
    assert time.monotonic() - start < LIMIT_S


def _word(rng, alphabet, low, high):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def _random_lines(rng, n):
    lines = []
    for _ in range(n):
        if rng.random() < 0.5:
            value = "-".join(_word(rng, "abz09", 1, 4) for _ in range(rng.randint(1, 4)))
            value = rng.choice([value, value + "-", "-" + value, value.replace("-", "--", 1), value.upper(), value + "_x"])
            lines.append("id:" + value)
        else:
            local = rng.choice("._").join(_word(rng, "aZ9", 1, 4) for _ in range(rng.randint(1, 3)))
            local += rng.choice(["", "", ".", "_", "..", "._"])
            domain = ".".join(_word(rng, "ab1", 1, 3) for _ in range(rng.randint(1, 3)))
            tld = rng.choice(["io", "com", "x", "c0m", ""])
            lines.append("email:" + rng.choice([f"{local}@{domain}.{tld}", f"{local}{domain}.{tld}", f"{local}@{domain}"]))
    return lines + ["", "name:alice", "id:", "email:@a.io"]


def test_hostile_ids(tmp_path):
    rng = random.Random(1)
    hostile = ["id:" + "a" * rng.randint(28, 40) + rng.choice(["!", "-", "--a", "A"]) for _ in range(8)]
    hostile += ["id:" + "-".join(["ab"] * rng.randint(12, 20)) + "-" for _ in range(4)]
    _check(tmp_path, hostile + _random_lines(rng, 200))


def test_hostile_emails(tmp_path):
    rng = random.Random(2)
    hostile = ["email:" + "a" * rng.randint(28, 40) + rng.choice(["!", "@", "@x", "@a..io", "@a.b"]) for _ in range(8)]
    hostile += ["email:" + "a1" * rng.randint(14, 20) + "@" + "b." * 20 + "c" for _ in range(2)]
    _check(tmp_path, hostile + _random_lines(rng, 200))


def test_large_mixed_file(tmp_path):
    rng = random.Random(3)
    lines = _random_lines(rng, 40_000)
    for _ in range(6):
        lines.insert(rng.randrange(len(lines)), rng.choice(["id:", "email:"]) + "b" * 30 + "!")
    _check(tmp_path, lines)
