import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/data/employees.csv': '719987d3fa6fe0eaa51a639122116637f2a9634276a9b0f955f54b7339715938'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


OUTPUT = Path("/app/output/departments.json")
EXPECTED = {'Engineering': {'count': 3, 'total_salary': 222500, 'employees': ['Amélie Laurent', 'Chen Wei', 'Farah Khan']}, 'Sales': {'count': 2, 'total_salary': 107500, 'employees': ['Bob Stone', 'Doe, Jane']}, 'Support': {'count': 2, 'total_salary': 90000, 'employees': ['Grace Hopper', 'Émile Zola']}}


def load():
    return json.loads(OUTPUT.read_text(encoding="utf-8"))


def test_valid_json_object():
    data = load()
    assert isinstance(data, dict)
    assert sorted(data) == sorted(EXPECTED)


def test_counts():
    data = load()
    assert {name: entry["count"] for name, entry in data.items()} == {
        name: entry["count"] for name, entry in EXPECTED.items()
    }


def test_total_salaries():
    data = load()
    for name, entry in EXPECTED.items():
        assert data[name]["total_salary"] == entry["total_salary"], name
        assert isinstance(data[name]["total_salary"], int), "total_salary must be an integer"


def test_employee_lists():
    data = load()
    for name, entry in EXPECTED.items():
        assert data[name]["employees"] == entry["employees"], name


def test_csv_unchanged():
    assert unchanged("/app/data/employees.csv")
