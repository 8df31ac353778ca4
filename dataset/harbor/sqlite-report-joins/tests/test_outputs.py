import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/school.db': '32b269e48e43d3e3d324d852231f377fa756adc6047766d0a2d0954f7fea0a00'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import base64
import csv
import sqlite3

EXPECTED = [['Art', '8', '72.6', 'ART102'], ['Biology', '0', '', ''], ['Chemistry', '9', '80.4', 'CHE110'], ['History', '8', '81.7', 'HIS106'], ['Mathematics', '10', '70.4', 'MAT126'], ['Physics', '8', '59.8', 'PHY106']]
FRESH = [['Art', '0', '', ''], ['Chemistry', '7', '65.7', 'CHE110'], ['History', '13', '73.3', 'HIS113'], ['Mathematics', '4', '76.7', 'MAT102'], ['Music', '10', '68.8', 'MUS117'], ['Physics', '14', '69.8', 'PHY115']]


def _fixture(tmp_path, name):
    """A database shipped beside the tests (base64 text), written out to tmp_path."""
    target = tmp_path / name
    target.write_bytes(base64.b64decode((Path(__file__).resolve().parent / f"{name}.b64").read_text()))
    return target


def _report():
    with open("/app/report.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows and rows[0] == ["department", "students", "avg_grade", "top_course"], rows[:1]
    return rows[1:]


def _column(rows, index):
    return [(row[0], row[index]) for row in rows]


def test_departments_in_order():
    assert [row[0] for row in _report()] == [row[0] for row in EXPECTED]


def test_student_counts():
    assert _column(_report(), 1) == _column(EXPECTED, 1)


def test_average_grades():
    got = _column(_report(), 2)
    want = _column(EXPECTED, 2)
    assert len(got) == len(want)
    for (dept, g), (_, w) in zip(got, want):
        assert dept and (g == w or (g and w and abs(float(g) - float(w)) < 0.051)), (dept, g, w)


def test_top_courses():
    assert _column(_report(), 3) == _column(EXPECTED, 3)


def test_query_file_on_another_database(tmp_path):
    con = sqlite3.connect(_fixture(tmp_path, "fresh.db"))
    rows = [["" if v is None else str(v) for v in row] for row in con.execute(Path("/app/report.sql").read_text())]
    assert [r[0] for r in rows] == [r[0] for r in FRESH]
    assert [r[1] for r in rows] == [r[1] for r in FRESH]
    assert [r[3] for r in rows] == [r[3] for r in FRESH]
    for got, want in zip(rows, FRESH):
        assert got[2] == want[2] or (got[2] and want[2] and abs(float(got[2]) - float(want[2])) < 0.051), (got, want)


def test_database_unchanged():
    assert unchanged("/app/school.db")
