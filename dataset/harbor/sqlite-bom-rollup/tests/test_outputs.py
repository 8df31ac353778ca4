import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/bom.db': '3799d64630d1f0d6136506812162df04c39e87bc145d8da8eeb494d8db35ffc5'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import base64
import csv
import sqlite3

EXPECTED = [['P00', '1507', '2', '3'], ['P01', '15610', '4', '6'], ['P02', '2816', '3', '3'], ['P03', '14347', '4', '8'], ['P04', '17764', '4', '6'], ['P09', '4321', '1', '0']]
FRESH = [['P00', '26620', '4', '5'], ['P01', '2885', '3', '4'], ['P02', '6435', '3', '3'], ['P03', '9299', '3', '6'], ['P04', '1305', '2', '2'], ['P09', '4321', '1', '0']]


def _fixture(tmp_path, name):
    target = tmp_path / name
    target.write_bytes(base64.b64decode((Path(__file__).resolve().parent / f"{name}.b64").read_text()))
    return target


def _rows():
    with open("/app/rollup.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows and rows[0] == ["product", "cost_cents", "levels", "leaf_parts"], rows[:1]
    return rows[1:]


def _col(rows, index):
    return [(r[0], r[index]) for r in rows]


def test_products_listed():
    assert [r[0] for r in _rows()] == [r[0] for r in EXPECTED]


def test_rolled_up_costs():
    assert _col(_rows(), 1) == _col(EXPECTED, 1)


def test_levels():
    assert _col(_rows(), 2) == _col(EXPECTED, 2)


def test_leaf_parts():
    assert _col(_rows(), 3) == _col(EXPECTED, 3)


def test_query_on_another_bill_of_materials(tmp_path):
    con = sqlite3.connect(_fixture(tmp_path, "fresh_bom.db"))
    rows = [[str(v) for v in row] for row in con.execute(Path("/app/rollup.sql").read_text())]
    assert rows == FRESH


def test_database_unchanged():
    assert unchanged("/app/bom.db")
