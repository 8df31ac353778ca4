import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/customers.csv': '0fe454e10eab21f21bc5ac1b329c39222165f737a2d2e5640474167bb2ba9d72', '/app/orders.csv': '65eaf85756ba1b631c70947948a7fc584497701a21f875f066c3f5da189c1f07'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['order_id,name,total', 'o1,Bo,10.50', 'o2,Ana,3.00', 'o3,Bo,4.25', 'o5,Chen,7.75']


def _lines():
    return Path("/app/report.csv").read_text().splitlines()


def test_header():
    assert _lines()[0] == EXPECTED[0]


def test_known_orders_joined():
    assert set(EXPECTED[1:]) <= set(_lines())


def test_exact_report():
    assert _lines() == EXPECTED
