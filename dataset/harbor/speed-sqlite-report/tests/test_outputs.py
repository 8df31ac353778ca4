import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/load.py': 'c619d78694f746aaa16ddfc1577cb33bfe4bf312218e90ce151c4edb39d405af', '/app/report.py': '902d2e667033cb1c8d260916a0df0ed34fa06afab12d71a2c5edcb63f0fdecad', '/app/schema.sql': '6800265391c98112662a0e9159e20e4770cbf24a3ab18960ce509fad41228384'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import random
import sys
from collections import defaultdict

LOAD_LIMIT_S = 60
REPORT_LIMIT_S = 15


def _data(folder, seed, customers, orders, ties=False):
    rng = random.Random(seed)
    names = {i: f"cust{rng.randrange(10**6):06d}" for i in range(1, customers + 1)}
    order_rows = []
    for oid in range(1, orders + 1):
        cid = rng.randrange(1, customers + 1) if not ties else rng.randrange(1, customers // 2 + 1)
        amount = 1000 if ties else rng.randrange(100, 100_000)
        order_rows.append((oid, cid, amount, f"2026-{rng.randrange(1, 13):02d}-01"))
    shipped = rng.sample(range(1, orders + 1), int(orders * 0.9))
    ship_rows = [(sid, oid, "2026-12-01") for sid, oid in enumerate(shipped, 1)]
    ship_rows += [(len(ship_rows) + k + 1, shipped[k], "2026-12-02") for k in range(50)]  # some shipped twice
    (folder / "customers.csv").write_text("id,name\n" + "".join(f"{i},{n}\n" for i, n in names.items()))
    (folder / "orders.csv").write_text("id,customer_id,amount_cents,placed\n" + "".join(",".join(map(str, r)) + "\n" for r in order_rows))
    (folder / "shipments.csv").write_text("id,order_id,shipped\n" + "".join(",".join(map(str, r)) + "\n" for r in ship_rows))
    has_shipment = set(shipped)
    per = defaultdict(lambda: [0, 0, 0])
    for oid, cid, amount, _ in order_rows:
        per[cid][0] += 1
        per[cid][1] += amount
        per[cid][2] += oid not in has_shipment
    top = sorted(per.items(), key=lambda kv: (-kv[1][1], names[kv[0]]))[:20]
    lines = [f"{names[cid]},{n},{total},{open_}" for cid, (n, total, open_) in top]
    lines.append(f"unshipped_orders {sum(1 for r in order_rows if r[0] not in has_shipment)}")
    return "\n".join(lines) + "\n"


def _report(tmp_path, seed, customers, orders, ties=False):
    expected = _data(tmp_path, seed, customers, orders, ties)
    db = tmp_path / "shop.db"
    load = run(sys.executable, "/app/load.py", str(db), str(tmp_path / "customers.csv"), str(tmp_path / "orders.csv"),
               str(tmp_path / "shipments.csv"), timeout=LOAD_LIMIT_S)
    assert load.returncode == 0, load.stderr[-2000:]
    start = time.monotonic()
    result = run(sys.executable, "/app/report.py", str(db), timeout=REPORT_LIMIT_S + 10)
    took = time.monotonic() - start
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, expected, took


def test_top_customers(tmp_path):
    got, expected, took = _report(tmp_path, 1, 5000, 80_000)
    assert got.splitlines()[:20] == expected.splitlines()[:20]
    assert took < REPORT_LIMIT_S, took


def test_unshipped_orders(tmp_path):
    got, expected, took = _report(tmp_path, 2, 6000, 70_000)
    assert got.splitlines()[-1] == expected.splitlines()[-1]
    assert got == expected
    assert took < REPORT_LIMIT_S, took


def test_ties_and_customers_without_orders(tmp_path):
    got, expected, took = _report(tmp_path, 3, 8000, 60_000, ties=True)
    assert got == expected
    assert took < REPORT_LIMIT_S, took
