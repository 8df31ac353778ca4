import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/ledger.sqlite': 'a6d37fbd7b156feab923460263cdf0c281e5b9d5c31aaaec7478744cba454cd7'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import base64
import shutil
import sqlite3

EXPECTED = {'1': ['luis', 66695, '2024-09-16 09:00:00'], '2': ['keiko', 5821, '2024-12-26 09:00:00'], '3': ['pavel', 2213, '2024-12-28 09:00:00'], '4': ['maren', 22091, '2024-11-16 09:00:00'], '5': ['rui', 82564, '2024-05-14 09:00:00'], '6': ['ines', 0, None], '7': ['olga', 0, None]}
FRESH = {'1': ['olga', 6021, '2024-12-08 09:00:00'], '2': ['jakob', 99171, '2024-11-27 09:00:00'], '3': ['pavel', 58139, '2024-12-22 09:00:00'], '4': ['luis', 68072, '2024-10-23 09:00:00'], '5': ['rui', 130941, '2024-11-22 09:00:00'], '6': ['keiko', 0, None], '7': ['ines', 0, None]}


def _fixture(tmp_path, name):
    """A database shipped beside the tests (base64 text), written out to tmp_path."""
    target = tmp_path / name
    target.write_bytes(base64.b64decode((Path(__file__).resolve().parent / f"{name}.b64").read_text()))
    return target


def _copy(tmp_path, source="/app/ledger.sqlite"):
    target = tmp_path / "bank.db"
    shutil.copy(source, target)
    return sqlite3.connect(target)


def _view(con):
    return {r[0]: [r[1], r[2], r[3]] for r in con.execute(
        "SELECT account_id, owner, balance_cents, last_activity FROM account_balances")}


def test_view_balances():
    got = _view(sqlite3.connect("file:/app/ledger.sqlite?mode=ro", uri=True))
    moving = {int(k): v for k, v in EXPECTED.items() if v[2] is not None}
    assert {k: v for k, v in got.items() if k in moving} == moving


def test_view_keeps_idle_accounts():
    got = _view(sqlite3.connect("file:/app/ledger.sqlite?mode=ro", uri=True))
    assert sorted(got) == sorted(int(k) for k in EXPECTED)
    for key, (owner, balance, last) in EXPECTED.items():
        if last is None:
            assert got[int(key)] == [owner, 0, None]


def test_overdraft_rejected(tmp_path):
    con = _copy(tmp_path)
    account, (owner, balance, last) = next((int(k), v) for k, v in EXPECTED.items() if v[1] > 0)
    try:
        con.execute("INSERT INTO transactions (account_id, kind, amount_cents, at) VALUES (?, 'withdrawal', ?, '2025-01-01')",
                    (account, balance + 1))
    except sqlite3.DatabaseError as error:
        assert "insufficient funds" in str(error)
    else:
        raise AssertionError("an overdraft was accepted")
    con.execute("INSERT INTO transactions (account_id, kind, amount_cents, at) VALUES (?, 'withdrawal', ?, '2025-01-02')",
                (account, balance))
    con.execute("INSERT INTO transactions (account_id, kind, amount_cents, at) VALUES (?, 'deposit', 5, '2025-01-03')",
                (account,))
    assert _view(con)[account][1:] == [5, "2025-01-03"]
    idle = next(int(k) for k, v in EXPECTED.items() if v[2] is None)
    try:
        con.execute("INSERT INTO transactions (account_id, kind, amount_cents, at) VALUES (?, 'withdrawal', 1, '2025-01-04')", (idle,))
    except sqlite3.DatabaseError as error:
        assert "insufficient funds" in str(error)
    else:
        raise AssertionError("a withdrawal from an empty account was accepted")


def test_owner_changes_logged(tmp_path):
    con = _copy(tmp_path)
    con.execute("UPDATE accounts SET owner = 'zoe' WHERE id = 2")
    con.execute("UPDATE accounts SET opened = '2020-01-01' WHERE id = 3")
    con.execute("UPDATE accounts SET owner = 'yann' WHERE id = 2")
    rows = con.execute("SELECT account_id, old_owner, new_owner FROM owner_changes ORDER BY rowid").fetchall()
    assert rows == [(2, EXPECTED["2"][0], "zoe"), (2, "zoe", "yann")]


def test_sql_file_builds_on_another_database(tmp_path):
    con = sqlite3.connect(_fixture(tmp_path, "fresh_bank.db"))
    con.executescript(Path("/app/bank_objects.sql").read_text())
    assert _view(con) == {int(k): v for k, v in FRESH.items()}
    account, (owner, balance, last) = next((int(k), v) for k, v in FRESH.items() if v[1] > 0)
    try:
        con.execute("INSERT INTO transactions (account_id, kind, amount_cents, at) VALUES (?, 'withdrawal', ?, '2025')",
                    (account, balance + 1))
    except sqlite3.DatabaseError:
        pass
    else:
        raise AssertionError("an overdraft was accepted")


def test_existing_rows_unchanged():
    con = sqlite3.connect("file:/app/ledger.sqlite?mode=ro", uri=True)
    assert con.execute("SELECT count(*), sum(amount_cents) FROM transactions").fetchone() == (23, 666072)
    assert con.execute("SELECT count(*) FROM accounts").fetchone()[0] == 7
