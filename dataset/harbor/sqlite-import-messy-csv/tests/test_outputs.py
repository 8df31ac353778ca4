import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/expenses.csv': '0a672edd4d5b734f7bb3559e10e2a5f88313a71db44126a0d5b2722444a2c4be', '/app/schema.sql': 'bec98f0bab3be2d369dabf02a896c74a30941c3d8f31534b8fb2c8ae097096ab'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import sqlite3

EXPECTED = {'expenses': [['2024-04-12', 'blue bottle', 'travel', -184863, 'misc'], ['2024-08-13', 'evergreen foods', 'food', 235332, 'team lunch'], ['2024-08-13', 'ACME CORP', 'food', 25571, 'misc'], ['2024-04-23', 'delta print', 'travel', 152546, 'misc'], ['2024-10-15', 'evergreen foods', 'travel', 74982, 'team lunch'], ['2024-12-12', 'delta print', 'food', 81047, 'misc'], ['2024-07-06', 'delta print', 'travel', 43663, 'team lunch'], ['2024-06-27', 'evergreen foods', 'office', 237375, 'toner "XL"'], ['2024-12-04', 'ACME CORP', 'travel', 200451, 'misc'], ['2024-04-01', 'City Transit', 'food', 172645, 'taxi, airport'], ['2024-08-07', 'evergreen foods', 'travel', 231548, 'team lunch'], ['2024-04-20', 'delta print', 'travel', 207248, 'misc'], ['2024-12-01', 'evergreen foods', 'office', 171859, ''], ['2024-06-13', 'FIXIT LTD', 'food', 20972, 'taxi, airport'], ['2024-05-21', 'blue bottle', 'uncategorized', 97085, 'taxi, airport'], ['2024-11-17', 'FIXIT LTD', 'food', 215299, 'toner "XL"'], ['2024-02-09', 'ACME CORP', 'uncategorized', 192285, ''], ['2024-05-26', 'City Transit', 'food', 232988, 'team lunch'], ['2024-04-08', 'evergreen foods', 'uncategorized', 96553, ''], ['2024-07-02', 'ACME CORP', 'food', 179678, 'toner "XL"'], ['2024-02-05', 'City Transit', 'uncategorized', 83964, 'team lunch'], ['2024-04-24', 'evergreen foods', 'food', 58382, ''], ['2024-06-24', 'ACME CORP', 'travel', 15088, 'team lunch'], ['2024-12-17', 'ACME CORP', 'travel', 36142, 'taxi, airport'], ['2024-08-02', 'delta print', 'office', 108846, 'taxi, airport'], ['2024-06-24', 'blue bottle', 'uncategorized', 69859, 'team lunch'], ['2024-09-18', 'City Transit', 'uncategorized', 149133, 'toner "XL"'], ['2024-01-28', 'evergreen foods', 'office', 91075, 'team lunch'], ['2024-08-19', 'delta print', 'office', 97805, 'taxi, airport'], ['2024-11-04', 'blue bottle', 'food', 125096, 'toner "XL"']], 'vendors': ['ACME CORP', 'City Transit', 'FIXIT LTD', 'blue bottle', 'delta print', 'evergreen foods'], 'categories': ['food', 'office', 'travel', 'uncategorized'], 'rejected': [11, 21, 23, 35, 36]}
FRESH = {'expenses': [['2024-02-19', 'fixit ltd', 'food', 105547, 'toner "XL"'], ['2024-06-26', 'blue bottle', 'uncategorized', 101415, 'toner "XL"'], ['2024-06-13', 'fixit ltd', 'uncategorized', 45559, 'taxi, airport'], ['2024-05-17', 'blue bottle', 'office', 177230, 'team lunch'], ['2024-10-14', 'fixit ltd', 'travel', 57350, 'misc'], ['2024-06-18', 'Acme Corp', 'food', 2248, 'team lunch'], ['2024-11-25', 'blue bottle', 'food', 152331, 'taxi, airport'], ['2024-03-02', 'Acme Corp', 'food', 215618, 'toner "XL"'], ['2024-09-14', 'blue bottle', 'uncategorized', 157445, ''], ['2024-12-06', 'Evergreen Foods', 'food', 236439, 'misc'], ['2024-04-25', 'Acme Corp', 'food', 57315, ''], ['2024-11-20', 'Evergreen Foods', 'food', 133102, 'taxi, airport'], ['2024-02-09', 'Acme Corp', 'uncategorized', 37014, 'misc'], ['2024-02-07', 'blue bottle', 'food', -229838, 'team lunch'], ['2024-06-27', 'Evergreen Foods', 'office', 110958, 'misc'], ['2024-03-09', 'blue bottle', 'office', 138657, 'team lunch'], ['2024-08-11', 'Delta Print', 'food', 227851, 'team lunch'], ['2024-04-28', 'blue bottle', 'travel', -120342, ''], ['2024-09-11', 'Acme Corp', 'uncategorized', 181436, ''], ['2024-10-03', 'Evergreen Foods', 'office', 152216, 'toner "XL"'], ['2024-12-03', 'fixit ltd', 'food', 53545, 'misc'], ['2024-11-04', 'Delta Print', 'travel', 66988, 'toner "XL"'], ['2024-10-15', 'Delta Print', 'travel', 135538, 'misc'], ['2024-10-23', 'Acme Corp', 'food', 11751, 'taxi, airport'], ['2024-09-08', 'Evergreen Foods', 'uncategorized', 211116, 'taxi, airport'], ['2024-09-06', 'Acme Corp', 'travel', 85736, 'team lunch'], ['2024-11-03', 'Evergreen Foods', 'uncategorized', 243882, 'toner "XL"'], ['2024-02-17', 'fixit ltd', 'travel', 196160, 'team lunch'], ['2024-02-17', 'Evergreen Foods', 'food', 63421, 'misc'], ['2024-12-03', 'Evergreen Foods', 'travel', 195486, 'taxi, airport'], ['2024-03-13', 'Evergreen Foods', 'food', 203524, 'misc']], 'vendors': ['Acme Corp', 'Delta Print', 'Evergreen Foods', 'blue bottle', 'fixit ltd'], 'categories': ['food', 'office', 'travel', 'uncategorized'], 'rejected': [5, 36, 39]}
FRESH_CSV = Path(__file__).resolve().parent / "fresh.csv"


def _expenses(db):
    con = sqlite3.connect(db)
    return sorted(tuple(r) for r in con.execute(
        "SELECT e.spent_on, v.name, c.name, e.amount_cents, e.note FROM expenses e "
        "JOIN vendors v ON v.id = e.vendor_id JOIN categories c ON c.id = e.category_id"))


def _fresh_db(tmp_path):
    db = tmp_path / "fresh.db"
    proc = run("python3", "/app/import.py", str(FRESH_CSV), str(db), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return str(db)


def test_app_database_imported():
    assert _expenses("/app/expenses.db") == sorted(tuple(e) for e in EXPECTED["expenses"])


def test_fresh_dates_and_amounts(tmp_path):
    got = [(e[0], e[3]) for e in _expenses(_fresh_db(tmp_path))]
    assert sorted(got) == sorted((e[0], e[3]) for e in FRESH["expenses"])


def test_fresh_rows_exact(tmp_path):
    assert _expenses(_fresh_db(tmp_path)) == sorted(tuple(e) for e in FRESH["expenses"])


def test_fresh_vendors_and_categories(tmp_path):
    con = sqlite3.connect(_fresh_db(tmp_path))
    assert sorted(r[0] for r in con.execute("SELECT name FROM vendors")) == FRESH["vendors"]
    assert sorted(r[0] for r in con.execute("SELECT name FROM categories")) == FRESH["categories"]


def test_fresh_rejected_rows(tmp_path):
    con = sqlite3.connect(_fresh_db(tmp_path))
    rows = con.execute("SELECT line_no, raw FROM rejected_rows ORDER BY line_no").fetchall()
    assert [r[0] for r in rows] == FRESH["rejected"]
    lines = FRESH_CSV.read_text(encoding="utf-8-sig").splitlines()
    assert all(raw == lines[number - 1] for number, raw in rows)


def test_schema_as_given():
    con = sqlite3.connect("/app/expenses.db")
    got = sorted(r[0] for r in con.execute("SELECT sql FROM sqlite_master WHERE type = 'table'"))
    want = sorted(s.strip() for s in Path("/app/schema.sql").read_text().split(";") if s.strip())
    assert [" ".join(s.split()) for s in got] == [" ".join(s.split()) for s in want]
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []


def test_inputs_unchanged():
    assert unchanged("/app/expenses.csv") and unchanged("/app/schema.sql")
