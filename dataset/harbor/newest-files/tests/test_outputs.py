import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/reports/r1.txt': '9a081a465811ef2c49cd4f9249472c92f91a3191a157182dc7237045afb254aa', '/app/reports/r2.txt': '3682897d6f1d0507411147d083e4f70c1dea83f1ffc16a9cdd29cb6577d92915', '/app/reports/r3.txt': '339dc903f219164f70dc937b4e62c7c884992a31d2c3002dd8377b64439120b2', '/app/reports/r4.txt': 'b635f2582d30fbce18697a8e3e7ee81c98f1e94924df144077b192cb70234cf1', '/app/reports/r5.txt': '726b862e0d737a37489f8cfa8ddc564b9547711f03c3e2264717cf9e39fb8a57', '/app/reports/r6.txt': '67cdd20ade3d627f3378ed6ac8c63eabcfc78856e73d17536e272f552608e732'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


def _got():
    return Path("/app/newest.txt").read_text().split()


def test_three_names():
    got = _got()
    assert len(got) == 3 and set(got) <= set(os.listdir("/app/reports"))


def test_right_files():
    assert sorted(_got()) == ["r2.txt", "r4.txt", "r5.txt"]


def test_newest_first():
    assert _got() == ["r2.txt", "r4.txt", "r5.txt"]
