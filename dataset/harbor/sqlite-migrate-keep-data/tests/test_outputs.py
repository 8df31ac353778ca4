import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/shop.db': 'fd2dea21cf61db4e530125758e4eafe8427c6caf525b1dbe44aaad3354875ab5'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import shutil
import sqlite3

EXPECTED = (['garden', 'hardware', 'paint', 'tools'], {41: ['level', 435, 'paint'], 42: ['file', 115, 'garden'], 43: ['shovel', 1999, 'garden'], 44: ['mallet', 870, 'tools'], 45: ['ladder', 1200, 'hardware'], 46: ['rake', 57, 'garden'], 47: ['pliers', 201, 'garden'], 48: ['wrench', 3333, 'hardware'], 49: ['bucket', 100510, 'tools'], 50: ['sander', 29, 'tools'], 51: ['drill', 15163, 'hardware'], 52: ['chisel', 23583, 'garden'], 53: ['trowel', 28310, 'tools'], 54: ['hose', 11865, 'paint']}, {101: [41, 2, '2023-10-25'], 102: [47, 2, '2023-05-13'], 103: [41, 1, '2023-04-07'], 104: [48, 7, '2024-12-13'], 105: [42, 4, '2024-11-09'], 106: [42, 5, '2024-06-01'], 107: [53, 2, '2023-03-08'], 108: [41, 1, '2024-08-26'], 109: [43, 4, '2023-08-17'], 110: [52, 3, '2024-07-21'], 111: [42, 7, '2023-07-07'], 112: [45, 5, '2023-01-07'], 113: [47, 2, '2023-01-05'], 114: [48, 5, '2024-01-25'], 115: [54, 5, '2023-07-03'], 116: [42, 4, '2023-10-21'], 117: [41, 6, '2024-06-20'], 118: [43, 8, '2024-10-05'], 119: [43, 3, '2023-05-08'], 120: [52, 4, '2023-03-24'], 121: [51, 7, '2023-08-20'], 122: [47, 1, '2023-02-04'], 123: [49, 5, '2024-04-24'], 124: [45, 7, '2024-10-16'], 125: [49, 3, '2023-12-03'], 126: [44, 8, '2023-09-21'], 127: [45, 4, '2023-04-24'], 128: [42, 5, '2023-07-15'], 129: [41, 1, '2024-03-10'], 130: [49, 3, '2023-02-12'], 131: [48, 6, '2023-11-24'], 132: [50, 1, '2024-01-16'], 133: [52, 5, '2023-01-01'], 134: [48, 2, '2024-12-10'], 135: [43, 2, '2024-02-15'], 136: [52, 1, '2023-12-24'], 137: [53, 6, '2024-06-03'], 138: [42, 7, '2024-01-28'], 139: [50, 1, '2024-10-22'], 140: [47, 1, '2023-10-03']})
FRESH = (['garden', 'hardware', 'paint', 'tools'], {21: ['drill', 435, 'tools'], 22: ['rake', 115, 'garden'], 23: ['hammer', 1999, 'tools'], 24: ['shovel', 870, 'garden'], 25: ['tape', 1200, 'tools'], 26: ['ladder', 57, 'garden'], 27: ['wrench', 201, 'garden'], 28: ['shears', 3333, 'paint'], 29: ['mallet', 100510, 'hardware'], 30: ['hose', 29, 'paint'], 31: ['gloves', 29410, 'paint'], 32: ['bucket', 24875, 'hardware'], 33: ['file', 9422, 'hardware'], 34: ['trowel', 29914, 'hardware']}, {101: [22, 7, '2024-01-19'], 102: [30, 5, '2023-10-11'], 103: [26, 5, '2024-09-10'], 104: [29, 4, '2023-05-05'], 105: [30, 2, '2024-12-26'], 106: [24, 6, '2023-09-05'], 107: [27, 3, '2023-08-02'], 108: [31, 7, '2023-07-01'], 109: [33, 4, '2023-11-01'], 110: [33, 1, '2023-09-15'], 111: [26, 1, '2023-07-16'], 112: [21, 2, '2023-05-15'], 113: [33, 8, '2023-05-07'], 114: [22, 3, '2023-12-18'], 115: [25, 2, '2023-07-06'], 116: [28, 6, '2023-11-14'], 117: [30, 7, '2023-02-23'], 118: [29, 5, '2024-07-14'], 119: [33, 1, '2023-05-04'], 120: [31, 3, '2024-06-18'], 121: [24, 3, '2024-11-03'], 122: [29, 2, '2024-04-18'], 123: [33, 8, '2023-12-09'], 124: [26, 7, '2023-01-26'], 125: [32, 7, '2023-04-26'], 126: [23, 8, '2023-12-14'], 127: [27, 5, '2023-08-20'], 128: [29, 5, '2023-05-03'], 129: [21, 8, '2023-07-25'], 130: [31, 8, '2024-10-14'], 131: [31, 6, '2024-07-12'], 132: [25, 6, '2023-03-13'], 133: [27, 8, '2024-09-09'], 134: [32, 2, '2024-07-07'], 135: [34, 3, '2023-09-12'], 136: [30, 8, '2024-02-09'], 137: [21, 1, '2023-05-26'], 138: [24, 8, '2023-01-14'], 139: [25, 4, '2023-06-19'], 140: [30, 2, '2024-03-24']})


def _connect(path):
    con = sqlite3.connect(path)
    con.execute("PRAGMA foreign_keys = ON")
    return con


def _columns(con, table):
    return [(row[1], row[2].upper(), row[3]) for row in con.execute(f"PRAGMA table_info({table})")]


def _check_schema(con):
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"categories", "products", "orders"} <= tables
    assert _columns(con, "categories") == [("id", "INTEGER", 0), ("name", "TEXT", 1)]
    assert _columns(con, "products") == [("id", "INTEGER", 0), ("name", "TEXT", 1), ("price_cents", "INTEGER", 1),
                                         ("category_id", "INTEGER", 1)]
    assert _columns(con, "orders") == [("id", "INTEGER", 0), ("product_id", "INTEGER", 1), ("qty", "INTEGER", 1),
                                       ("placed_on", "TEXT", 1)]


def _check_data(con, expected):
    cats, prods, ords = expected
    assert sorted(r[0] for r in con.execute("SELECT name FROM categories")) == cats
    got = {r[0]: [r[1], r[2], r[3]] for r in con.execute(
        "SELECT p.id, p.name, p.price_cents, c.name FROM products p JOIN categories c ON c.id = p.category_id")}
    assert got == {int(k): v for k, v in prods.items()}
    got_orders = {r[0]: [r[1], r[2], r[3]] for r in con.execute("SELECT id, product_id, qty, placed_on FROM orders")}
    assert got_orders == {int(k): v for k, v in ords.items()}


def test_schema_is_v2():
    _check_schema(_connect("/app/shop.db"))


def test_categories_normalised():
    con = _connect("/app/shop.db")
    cats = [r[0] for r in con.execute("SELECT name FROM categories ORDER BY name")]
    assert cats == EXPECTED[0]
    try:
        con.execute("INSERT INTO categories (name) VALUES (?)", (cats[0],))
    except sqlite3.IntegrityError:
        pass
    else:
        raise AssertionError("categories.name is not unique")
    finally:
        con.rollback()
        con.close()


def test_data_kept():
    _check_data(_connect("/app/shop.db"), EXPECTED)


def test_foreign_keys_enforced():
    con = _connect("/app/shop.db")
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    for sql in ("INSERT INTO orders (id, product_id, qty, placed_on) VALUES (99999, 424242, 1, '2024-01-01')",
                "INSERT INTO products (id, name, price_cents, category_id) VALUES (99999, 'x', 1, 424242)"):
        try:
            con.execute(sql)
        except sqlite3.IntegrityError:
            continue
        con.rollback()
        raise AssertionError(f"accepted a dangling reference: {sql}")
    con.rollback()
    con.close()


def test_script_migrates_a_fresh_v1_database(tmp_path):
    target = tmp_path / "fresh.db"
    shutil.copy(Path(__file__).resolve().parent / "fresh_v1.db", target)
    con = sqlite3.connect(target)
    con.executescript(Path("/app/migrate_v2.sql").read_text())
    con.close()
    con = _connect(target)
    _check_schema(con)
    _check_data(con, FRESH)
