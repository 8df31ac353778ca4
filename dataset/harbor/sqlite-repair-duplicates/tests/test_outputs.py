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

EXPECTED = {'survivors': {'amara@example.org': 1, 'bjorn@example.org': 12, 'chiara@example.org': 33, 'dmitri@example.org': 56, 'eun@example.org': 68, 'farah@example.org': 91, 'goran@example.org': 105, 'hana@example.org': 117, 'ivo@example.org': 127, 'jun@example.org': 138, 'kofi@example.org': 150, 'lena@example.org': 163, 'mateo@example.org': 187, 'nadia@example.org': 213, 'omar@example.org': 259, 'priya@example.org': 269, 'quinn@example.org': 290, 'rosa@example.org': 327, 'sven@example.org': 339, 'tomas@example.org': 351}, 'orders_by_survivor': {213: [500, 503, 530, 549, 567, 570, 574, 584, 594], 12: [501, 521, 536, 546, 559, 600], 33: [502, 552, 598, 602], 339: [506, 514], 290: [509, 587, 591, 615], 138: [512, 541, 548, 577], 269: [515, 520, 544, 551, 565, 618], 259: [518, 612], 327: [524, 601, 623], 187: [525, 533, 538, 557, 571, 590], 150: [527, 586], 351: [555, 582, 604, 606], 105: [561], 1: [563, 609], 117: [579, 597, 610], 68: [593], 163: [620]}, 'orphan_orders': [626, 627, 628], 'dropped_payments': [9022, 9047, 9056], 'unmatched': [[9070, 1, 475, '2024-05-05'], [9071, 77777, 2593, '2024-05-05'], [9072, 31337, 4584, '2024-05-05']], 'kept_payment_sum': 173316, 'kept_payments': 67, 'kept_payment_ids': [9000, 9001, 9002, 9003, 9004, 9005, 9006, 9007, 9008, 9009, 9010, 9011, 9012, 9013, 9014, 9015, 9016, 9017, 9018, 9019, 9020, 9021, 9023, 9024, 9025, 9026, 9027, 9028, 9029, 9030, 9031, 9032, 9033, 9034, 9035, 9036, 9037, 9038, 9039, 9040, 9041, 9042, 9043, 9044, 9045, 9046, 9048, 9049, 9050, 9051, 9052, 9053, 9054, 9055, 9057, 9058, 9059, 9060, 9061, 9062, 9063, 9064, 9065, 9066, 9067, 9068, 9069], 'payments': [[9000, 515, 4331, '2024-06-16'], [9001, 530, 4655, '2024-05-11'], [9002, 561, 557, '2024-03-19'], [9003, 541, 1706, '2024-03-16'], [9004, 561, 1972, '2024-05-15'], [9005, 546, 3549, '2024-06-14'], [9006, 582, 3707, '2024-07-15'], [9007, 506, 1625, '2024-04-14'], [9008, 606, 1488, '2024-02-11'], [9009, 594, 2641, '2024-05-17'], [9010, 557, 1710, '2024-02-18'], [9011, 512, 2833, '2024-09-17'], [9012, 563, 2985, '2024-03-16'], [9013, 563, 1376, '2024-01-14'], [9014, 582, 2733, '2024-06-14'], [9015, 574, 584, '2024-06-11'], [9016, 593, 1969, '2024-09-18'], [9017, 579, 4891, '2024-03-14'], [9018, 515, 4563, '2024-05-16'], [9019, 582, 3715, '2024-09-15'], [9020, 610, 2221, '2024-02-19'], [9021, 520, 1316, '2024-03-17'], [9022, 627, 4475, '2024-03-16'], [9023, 561, 1578, '2024-03-17'], [9024, 567, 1191, '2024-06-16'], [9025, 565, 1735, '2024-08-15'], [9026, 500, 4195, '2024-06-13'], [9027, 597, 1215, '2024-08-14'], [9028, 520, 1796, '2024-02-17'], [9029, 579, 4168, '2024-06-12'], [9030, 602, 682, '2024-05-12'], [9031, 506, 903, '2024-01-10'], [9032, 610, 2948, '2024-03-13'], [9033, 506, 3135, '2024-07-16'], [9034, 541, 4325, '2024-01-14'], [9035, 552, 905, '2024-02-11'], [9036, 552, 1440, '2024-09-14'], [9037, 520, 398, '2024-06-11'], [9038, 571, 1278, '2024-07-14'], [9039, 612, 927, '2024-06-13'], [9040, 530, 3969, '2024-06-18'], [9041, 555, 3601, '2024-03-14'], [9042, 594, 212, '2024-09-13'], [9043, 623, 1856, '2024-01-12'], [9044, 597, 961, '2024-05-13'], [9045, 565, 1955, '2024-06-17'], [9046, 520, 2461, '2024-08-15'], [9047, 626, 2008, '2024-05-15'], [9048, 590, 2281, '2024-08-15'], [9049, 594, 3172, '2024-04-16'], [9050, 555, 4744, '2024-09-10'], [9051, 501, 3892, '2024-09-15'], [9052, 570, 4961, '2024-08-16'], [9053, 509, 4283, '2024-08-17'], [9054, 574, 4400, '2024-09-10'], [9055, 500, 2066, '2024-09-10'], [9056, 628, 3325, '2024-05-16'], [9057, 536, 816, '2024-08-13'], [9058, 520, 3748, '2024-04-16'], [9059, 521, 4136, '2024-04-12'], [9060, 582, 4489, '2024-05-15'], [9061, 502, 2233, '2024-05-11'], [9062, 501, 3345, '2024-07-10'], [9063, 561, 4657, '2024-02-17'], [9064, 514, 4253, '2024-08-16'], [9065, 601, 2578, '2024-03-11'], [9066, 546, 3139, '2024-03-19'], [9067, 538, 3152, '2024-05-12'], [9068, 514, 1351, '2024-05-19'], [9069, 506, 659, '2024-04-17'], [9070, 1, 475, '2024-05-05'], [9071, 77777, 2593, '2024-05-05'], [9072, 31337, 4584, '2024-05-05']]}


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
    total = con.execute("SELECT coalesce(sum(amount_cents), 0) FROM payments").fetchone()[0]
    assert total == EXPECTED["kept_payment_sum"]


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
    """No payment is altered and none that must stay is lost; payments still to be moved or dropped may be there
    (partial work keeps its credit)."""
    original = {row[0]: row for row in EXPECTED["payments"]}
    rows = [list(r) for r in _con().execute("SELECT id, order_id, amount_cents, paid_at FROM payments")]
    assert all(original.get(row[0]) == row for row in rows), "a payment was changed"
    assert set(EXPECTED["kept_payment_ids"]) <= {row[0] for row in rows}, "a payment that must stay was removed"
