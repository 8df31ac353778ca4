import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/customers.sqlite': '137e8200075c5fafd13a2e26cd0dd297cf22b4edd057f3ea0e7a9a37f8d40d3e'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import sqlite3

EXPECTED = {'survivors': {'amara@example.org': 1, 'bjorn@example.org': 12, 'chiara@example.org': 33, 'dmitri@example.org': 56, 'eun@example.org': 68, 'farah@example.org': 91, 'goran@example.org': 105, 'hana@example.org': 117, 'ivo@example.org': 127, 'jun@example.org': 138, 'kofi@example.org': 150, 'lena@example.org': 163, 'mateo@example.org': 187, 'nadia@example.org': 213, 'omar@example.org': 259, 'priya@example.org': 269, 'quinn@example.org': 290, 'rosa@example.org': 327, 'sven@example.org': 339, 'tomas@example.org': 351}, 'orders_by_survivor': {213: [500, 503, 530, 549, 567, 570, 574, 584, 594], 12: [501, 521, 536, 546, 559, 600], 33: [502, 552, 598, 602], 339: [506, 514], 290: [509, 587, 591, 615], 138: [512, 541, 548, 577], 269: [515, 520, 544, 551, 565, 618], 259: [518, 612], 327: [524, 601, 623], 187: [525, 533, 538, 557, 571, 590], 150: [527, 586], 351: [555, 582, 604, 606], 105: [561], 1: [563, 609], 117: [579, 597, 610], 68: [593], 163: [620]}, 'orphan_orders': [626, 627, 628], 'dropped_payments': [9022, 9047, 9056], 'unmatched': [[9070, 1, 475, '2024-05-05'], [9071, 77777, 2593, '2024-05-05'], [9072, 31337, 4584, '2024-05-05']], 'kept_payment_sum': 173316, 'kept_payments': 67}


def _con():
    con = sqlite3.connect("/app/customers.sqlite")
    con.execute("PRAGMA foreign_keys = ON")
    return con


def test_one_customer_per_email():
    con = _con()
    emails = [r[0] for r in con.execute("SELECT email FROM customers")]
    assert sorted(emails) == sorted(EXPECTED["survivors"])
    for email in ("AMARA@example.org", " hana@example.org"):
        try:
            con.execute("INSERT INTO customers (id, email, name, created_at) VALUES (999999, ?, 'x', '2024')",
                        (email.strip().lower(),))
        except sqlite3.IntegrityError:
            continue
        con.rollback()
        raise AssertionError("a second customer with the same email was accepted")
    con.rollback()
    con.close()


def test_oldest_record_survives():
    got = {email: cid for cid, email in _con().execute("SELECT id, email FROM customers")}
    assert got == EXPECTED["survivors"]


def test_orders_moved_to_the_survivor():
    got = {}
    for oid, cid in _con().execute("SELECT id, customer_id FROM orders ORDER BY id"):
        got.setdefault(cid, []).append(oid)
    assert got == {int(k): v for k, v in EXPECTED["orders_by_survivor"].items()}


def test_orphan_orders_and_their_payments_removed():
    con = _con()
    kept = {r[0] for r in con.execute("SELECT id FROM orders")}
    assert kept and not kept & set(EXPECTED["orphan_orders"])
    ids = {r[0] for r in con.execute("SELECT id FROM payments")}
    assert ids and not ids & set(EXPECTED["dropped_payments"])
    assert len(ids) == EXPECTED["kept_payments"]


def test_unmatched_payments_kept_aside():
    con = _con()
    rows = sorted(list(r) for r in con.execute("SELECT id, order_id, amount_cents, paid_at FROM unmatched_payments"))
    assert rows == EXPECTED["unmatched"]


def test_constraints_hold():
    con = _con()
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM customers").fetchone()[0] == len(EXPECTED["survivors"])


def test_kept_payments_unchanged():
    con = _con()
    total = con.execute("SELECT coalesce(sum(amount_cents), 0) FROM payments").fetchone()[0]
    assert total == EXPECTED["kept_payment_sum"]
