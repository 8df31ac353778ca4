"""SQLite databases: migrations that keep data, reports over joins, repairs under constraints, imports, views and
triggers. Every database ships as a binary ``.db`` fixture built here with :mod:`sqlite3` (deterministic)."""

from __future__ import annotations

import base64
import csv
import io
import os
import random
import sqlite3
import tempfile
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

from _spec import Spec

_SQLITE_VERSION_FIELD = (3040001).to_bytes(4, "big")


def _db(script: str, rows: dict[str, list[tuple]] | None = None, user_version: int = 0) -> bytes:
    """The bytes of a database made by ``script`` then ``rows`` inserted per table, with the library-version
    field of the header fixed (so the fixture is the same whichever sqlite builds it)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "fixture.db")
        con = sqlite3.connect(path)
        con.executescript(script)
        for table, values in (rows or {}).items():
            if values:
                marks = ",".join("?" * len(values[0]))
                con.executemany(f"INSERT INTO {table} VALUES ({marks})", values)
        con.execute(f"PRAGMA user_version = {user_version}")
        con.commit()
        con.execute("VACUUM")
        con.close()
        data = bytearray(open(path, "rb").read())
    data[96:100] = _SQLITE_VERSION_FIELD
    return bytes(data)


# --------------------------------------------------------------------------------------------------------------
# 1. sqlite-migrate-keep-data: v1 -> v2 schema, data kept, script re-run on a fresh v1 database.

_V1_SCHEMA = """
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, price TEXT, category TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, product_id INTEGER, qty INTEGER, placed TEXT);
"""
_PRODUCT_NAMES = ["hammer", "trowel", "rake", "hose", "gloves", "shears", "ladder", "bucket", "wrench", "drill",
                  "sander", "saw", "pliers", "tape", "level", "clamp", "chisel", "file", "mallet", "shovel"]
_CATEGORY_SPELLINGS = {"tools": ["Tools", "tools", " TOOLS", "Tools "], "garden": ["Garden", "garden ", "GARDEN"],
                       "hardware": ["Hardware", "hardware"], "paint": ["paint", " Paint"]}
_TRICKY_PRICES = ["0.29", "4.35", "1.15", "19.99", "8.7", "12", "0.57", "2.01", "33.33", "1005.10"]


def _v1_data(seed: int) -> tuple[list[tuple], list[tuple]]:
    rng = random.Random(seed)
    products = []
    for pid, name in enumerate(rng.sample(_PRODUCT_NAMES, 14), start=1):
        cat = rng.choice(sorted(_CATEGORY_SPELLINGS))
        price = _TRICKY_PRICES[pid % len(_TRICKY_PRICES)] if pid <= len(_TRICKY_PRICES) else f"{rng.randrange(1, 300)}.{rng.randrange(0, 100):02d}"
        products.append((pid + seed % 7 * 10, name, price, rng.choice(_CATEGORY_SPELLINGS[cat])))
    orders = []
    for oid in range(1, 41):
        p = rng.choice(products)
        orders.append((oid + 100, p[0], rng.randrange(1, 9), f"{rng.randrange(1, 13):02d}/{rng.randrange(1, 29):02d}/{rng.choice([2023, 2024])}"))
    return products, orders


def _v2_expected(products, orders):
    cats = sorted({p[3].strip().lower() for p in products})
    prods = {p[0]: [p[1], int((Decimal(p[2]) * 100).to_integral_value(ROUND_HALF_UP)), p[3].strip().lower()] for p in products}
    ords = {o[0]: [o[1], o[2], f"{o[3][6:10]}-{o[3][0:2]}-{o[3][3:5]}"] for o in orders}
    return cats, prods, ords


_mig_products, _mig_orders = _v1_data(11)
_mig_fresh_products, _mig_fresh_orders = _v1_data(23)
_MIG_DB = _db(_V1_SCHEMA, {"products": _mig_products, "orders": _mig_orders}, user_version=1)
_MIG_FRESH_DB = _db(_V1_SCHEMA, {"products": _mig_fresh_products, "orders": _mig_fresh_orders}, user_version=1)

_MIGRATE_SQL = """PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
INSERT INTO categories (name) SELECT DISTINCT lower(trim(category)) FROM products ORDER BY 1;
CREATE TABLE products_v2 (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
  category_id INTEGER NOT NULL REFERENCES categories(id)
);
INSERT INTO products_v2 (id, name, price_cents, category_id)
  SELECT p.id, p.name, CAST(round(CAST(p.price AS REAL) * 100) AS INTEGER), c.id
  FROM products p JOIN categories c ON c.name = lower(trim(p.category));
CREATE TABLE orders_v2 (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products(id),
  qty INTEGER NOT NULL,
  placed_on TEXT NOT NULL
);
INSERT INTO orders_v2 (id, product_id, qty, placed_on)
  SELECT id, product_id, qty, substr(placed, 7, 4) || '-' || substr(placed, 1, 2) || '-' || substr(placed, 4, 2) FROM orders;
DROP TABLE orders;
DROP TABLE products;
ALTER TABLE products_v2 RENAME TO products;
ALTER TABLE orders_v2 RENAME TO orders;
PRAGMA user_version = 2;
COMMIT;
"""

_MIGRATE_TESTS = '''
import shutil
import sqlite3

EXPECTED = {expected!r}
FRESH = {fresh!r}


def _connect(path):
    con = sqlite3.connect(path)
    con.execute("PRAGMA foreign_keys = ON")
    return con


def _columns(con, table):
    return [(row[1], row[2].upper(), row[3]) for row in con.execute(f"PRAGMA table_info({{table}})")]


def _check_schema(con):
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2
    tables = {{r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}}
    assert {{"categories", "products", "orders"}} <= tables
    assert _columns(con, "categories") == [("id", "INTEGER", 0), ("name", "TEXT", 1)]
    assert _columns(con, "products") == [("id", "INTEGER", 0), ("name", "TEXT", 1), ("price_cents", "INTEGER", 1),
                                         ("category_id", "INTEGER", 1)]
    assert _columns(con, "orders") == [("id", "INTEGER", 0), ("product_id", "INTEGER", 1), ("qty", "INTEGER", 1),
                                       ("placed_on", "TEXT", 1)]


def _check_data(con, expected):
    cats, prods, ords = expected
    assert sorted(r[0] for r in con.execute("SELECT name FROM categories")) == cats
    got = {{r[0]: [r[1], r[2], r[3]] for r in con.execute(
        "SELECT p.id, p.name, p.price_cents, c.name FROM products p JOIN categories c ON c.id = p.category_id")}}
    assert got == {{int(k): v for k, v in prods.items()}}
    got_orders = {{r[0]: [r[1], r[2], r[3]] for r in con.execute("SELECT id, product_id, qty, placed_on FROM orders")}}
    assert got_orders == {{int(k): v for k, v in ords.items()}}


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
        raise AssertionError(f"accepted a dangling reference: {{sql}}")
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
'''

_MIGRATE = Spec(
    task_id="sqlite-migrate-keep-data",
    title="Migrate a SQLite database to a normalised schema without losing data",
    difficulty="medium",
    category="sqlite",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/shop.db is at schema version 1 (`PRAGMA user_version` is 1): `products(id, name, price, category)` with the
price as text such as `4.35`, and `orders(id, product_id, qty, placed)` with the date as text `MM/DD/YYYY`.

Write /app/migrate_v2.sql, a SQL script that turns any version-1 database into version 2, and apply it to
/app/shop.db. Version 2 is exactly these tables (column names and order as written; every column NOT NULL
except the primary keys; foreign keys declared with REFERENCES):

- `categories(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)`: one row per distinct category, the old value
  trimmed and lower-cased (`" Tools"` and `"tools"` are the same category `tools`);
- `products(id INTEGER PRIMARY KEY, name TEXT, price_cents INTEGER, category_id INTEGER REFERENCES categories(id))`:
  the price in whole cents, exactly (`4.35` is 435);
- `orders(id INTEGER PRIMARY KEY, product_id INTEGER REFERENCES products(id), qty INTEGER, placed_on TEXT)`: the
  date as ISO `YYYY-MM-DD`;
- `PRAGMA user_version = 2`.

Every product and order keeps its id and its data. The script must run with a plain `executescript` on a
version-1 database (it will also be run on another one).
""",
    files={"shop.db": _MIG_DB},
    test_files={"fresh_v1.db": _MIG_FRESH_DB},
    tests=_MIGRATE_TESTS.format(expected=_v2_expected(_mig_products, _mig_orders),
                                fresh=_v2_expected(_mig_fresh_products, _mig_fresh_orders)),
    weights={"test_schema_is_v2": 1.0, "test_categories_normalised": 1.0, "test_data_kept": 2.0,
             "test_foreign_keys_enforced": 1.0, "test_script_migrates_a_fresh_v1_database": 2.5},
    solution=f"""cat > /app/migrate_v2.sql <<'SQL'
{_MIGRATE_SQL}SQL
sqlite3 /app/shop.db < /app/migrate_v2.sql
sqlite3 /app/shop.db 'PRAGMA user_version; PRAGMA foreign_key_check;'
""",
    dev_tools=True,
    harbor=True,
    tags=["sqlite", "migration", "sql", "binary-fixture"],
)


# --------------------------------------------------------------------------------------------------------------
# 2. sqlite-report-joins: a report over four joined tables, and the query kept to run on another database.

_SCHOOL_SCHEMA = """
CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE courses (code TEXT PRIMARY KEY, title TEXT NOT NULL, department_id INTEGER NOT NULL REFERENCES departments(id));
CREATE TABLE students (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE enrollments (id INTEGER PRIMARY KEY, student_id INTEGER NOT NULL REFERENCES students(id),
                          course_code TEXT NOT NULL REFERENCES courses(code), term TEXT NOT NULL,
                          status TEXT NOT NULL, grade INTEGER);
"""
_DEPTS = ["Physics", "History", "Mathematics", "Biology", "Art", "Chemistry", "Music"]


def _school(seed: int):
    rng = random.Random(seed)
    depts = [(i + 1, name) for i, name in enumerate(rng.sample(_DEPTS, 6))]
    courses = []
    for d_id, name in depts[:-1]:  # the last department offers no course
        for n in range(rng.randrange(2, 4)):
            courses.append((f"{name[:3].upper()}{100 + 10 * n + rng.randrange(0, 9)}", f"{name} {n}", d_id))
    students = [(i, f"student{i:03d}") for i in range(1, 41)]
    enrollments = []
    eid = 1
    for sid, _ in students:
        for course in rng.sample(courses, rng.randrange(1, 5)):
            term = rng.choice(["2024-fall", "2024-fall", "2024-spring"])
            status = rng.choice(["active", "active", "active", "withdrawn"])
            grade = None if rng.random() < 0.25 else rng.randrange(40, 101)
            enrollments.append((eid, sid, course[0], term, status, grade))
            eid += 1
    return depts, courses, students, enrollments


def _school_report(depts, courses, students, enrollments):
    dept_of = {c[0]: c[2] for c in courses}
    rows = []
    for d_id, name in sorted(depts, key=lambda d: d[1]):
        chosen = [e for e in enrollments if dept_of[e[2]] == d_id and e[3] == "2024-fall" and e[4] == "active"]
        grades = [e[5] for e in chosen if e[5] is not None]
        per_course: dict[str, int] = defaultdict(int)
        for e in chosen:
            per_course[e[2]] += 1
        top = min(per_course, key=lambda c: (-per_course[c], c)) if per_course else ""
        avg = f"{sum(grades) / len(grades):.1f}" if grades else ""
        rows.append([name, str(len({e[1] for e in chosen})), avg, top])
    return rows


_school_main = _school(5)
_school_fresh = _school(77)
_SCHOOL_DB = _db(_SCHOOL_SCHEMA, dict(zip(["departments", "courses", "students", "enrollments"], _school_main)))
_SCHOOL_FRESH_DB = _db(_SCHOOL_SCHEMA, dict(zip(["departments", "courses", "students", "enrollments"], _school_fresh)))

_REPORT_SQL = """SELECT d.name AS department,
       COUNT(DISTINCT e.student_id) AS students,
       CASE WHEN COUNT(e.grade) = 0 THEN '' ELSE printf('%.1f', AVG(e.grade)) END AS avg_grade,
       COALESCE((SELECT e2.course_code FROM enrollments e2 JOIN courses c2 ON c2.code = e2.course_code
                 WHERE c2.department_id = d.id AND e2.term = '2024-fall' AND e2.status = 'active'
                 GROUP BY e2.course_code ORDER BY COUNT(*) DESC, e2.course_code LIMIT 1), '') AS top_course
FROM departments d
LEFT JOIN courses c ON c.department_id = d.id
LEFT JOIN enrollments e ON e.course_code = c.code AND e.term = '2024-fall' AND e.status = 'active'
GROUP BY d.id
ORDER BY d.name;
"""

_REPORT_TESTS = '''
import base64
import csv
import sqlite3

EXPECTED = {expected!r}
FRESH = {fresh!r}


def _fixture(tmp_path, name):
    """A database shipped beside the tests (base64 text), written out to tmp_path."""
    target = tmp_path / name
    target.write_bytes(base64.b64decode((Path(__file__).resolve().parent / f"{{name}}.b64").read_text()))
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
'''

_REPORT = Spec(
    task_id="sqlite-report-joins",
    title="A department report over four joined SQLite tables",
    difficulty="medium",
    category="sqlite",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/school.db holds `departments`, `courses` (each in one department), `students` and `enrollments`
(`student_id`, `course_code`, `term`, `status` of `active` or `withdrawn`, and a `grade` that may be NULL).

Write a single SQL SELECT statement to /app/report.sql and its result to /app/report.csv (comma-separated, with the
header `department,students,avg_grade,top_course`). One row per department, ordered by department name, every
department included, counting only enrollments of term `2024-fall` whose status is `active`:

- `students`: how many different students are enrolled in the department's courses;
- `avg_grade`: the mean of the non-NULL grades, with one decimal (`71.5`), empty when there is none;
- `top_course`: the code of the department's course with most such enrollments (ties: the smallest code), empty
  when there is none.

The query must not depend on this database's data (it will be run on another database with the same schema).
Do not change /app/school.db.
""",
    files={"school.db": _SCHOOL_DB},
    test_files={"fresh.db.b64": base64.b64encode(_SCHOOL_FRESH_DB).decode()},
    tests=_REPORT_TESTS.format(expected=_school_report(*_school_main), fresh=_school_report(*_school_fresh)),
    weights={"test_departments_in_order": 0.5, "test_student_counts": 1.5, "test_average_grades": 1.5,
             "test_top_courses": 1.5, "test_query_file_on_another_database": 2.0},
    guards=["test_database_unchanged"],
    solution=f"""cat > /app/report.sql <<'SQL'
{_REPORT_SQL}SQL
python3 - <<'EOF'
import csv
import sqlite3

con = sqlite3.connect("file:/app/school.db?mode=ro", uri=True)
rows = con.execute(open("/app/report.sql").read()).fetchall()
with open("/app/report.csv", "w", newline="") as handle:
    out = csv.writer(handle)
    out.writerow(["department", "students", "avg_grade", "top_course"])
    out.writerows(rows)
EOF
cat /app/report.csv
""",
    dev_tools=True,
    tags=["sqlite", "sql", "join", "report", "binary-fixture"],
)


# --------------------------------------------------------------------------------------------------------------
# 3. sqlite-repair-duplicates (held out): merge duplicate customers, drop orphans, then enforce constraints.

_CRM_SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT NOT NULL, name TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total_cents INTEGER NOT NULL);
CREATE TABLE payments (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id), amount_cents INTEGER NOT NULL, paid_at TEXT NOT NULL);
"""


def _crm():
    rng = random.Random(31)
    people = ["amara", "bjorn", "chiara", "dmitri", "eun", "farah", "goran", "hana", "ivo", "jun", "kofi", "lena",
              "mateo", "nadia", "omar", "priya", "quinn", "rosa", "sven", "tomas"]
    customers = []
    cid = 1
    for person in people:
        copies = 1 if rng.random() < 0.55 else rng.randrange(2, 4)
        for k in range(copies):
            email = f"{person}@example.org"
            if k:
                email = rng.choice([email.upper(), " " + email, email.capitalize() + " ", email.replace(person, person.title())])
            day = rng.randrange(1, 28)
            customers.append((cid, email, person.title(), f"2023-{rng.randrange(1, 13):02d}-{day:02d} 10:{k:02d}:00"))
            cid += 10 + rng.randrange(0, 5)
    # a same-timestamp tie: two copies created at the same time (the smaller id survives)
    customers.append((cid, "Hana@Example.org", "Hana", next(c[3] for c in customers if c[1].strip().lower() == "hana@example.org")))
    orders, payments = [], []
    oid, pid = 500, 9000
    ids = [c[0] for c in customers]
    for _ in range(60):
        orders.append((oid, rng.choice(ids), rng.randrange(500, 20000)))
        oid += rng.randrange(1, 4)
    for ghost in (7, 8888, 4242):  # orders of customers that do not exist
        orders.append((oid, ghost, rng.randrange(500, 20000)))
        oid += 1
    order_ids = [o[0] for o in orders]
    for _ in range(70):
        o = rng.choice(order_ids)
        payments.append((pid, o, rng.randrange(100, 5000), f"2024-0{rng.randrange(1, 10)}-1{rng.randrange(0, 10)}"))
        pid += 1
    for ghost in (1, 77777, 31337):  # payments for orders that do not exist
        payments.append((pid, ghost, rng.randrange(100, 5000), "2024-05-05"))
        pid += 1
    return customers, orders, payments


def _crm_expected(customers, orders, payments):
    groups: dict[str, list[tuple]] = defaultdict(list)
    for c in customers:
        groups[c[1].strip().lower()].append(c)
    survivor_of = {}
    survivors = {}
    for email, members in groups.items():
        keep = min(members, key=lambda c: (c[3], c[0]))
        survivors[email] = keep[0]
        for m in members:
            survivor_of[m[0]] = keep[0]
    orphan_orders = sorted(o[0] for o in orders if o[1] not in survivor_of)
    kept_orders = {o[0]: survivor_of[o[1]] for o in orders if o[1] in survivor_of}
    orders_by_survivor: dict[int, list[int]] = defaultdict(list)
    for o, s in kept_orders.items():
        orders_by_survivor[s].append(o)
    all_order_ids = {o[0] for o in orders}
    unmatched = sorted(p for p in payments if p[1] not in all_order_ids)
    dropped_payments = sorted(p[0] for p in payments if p[1] in orphan_orders)
    kept_payment_sum = sum(p[2] for p in payments if p[1] in kept_orders)
    return {
        "survivors": survivors,
        "orders_by_survivor": {s: sorted(v) for s, v in orders_by_survivor.items()},
        "orphan_orders": orphan_orders,
        "dropped_payments": dropped_payments,
        "unmatched": [list(p) for p in unmatched],
        "kept_payment_sum": kept_payment_sum,
        "kept_payments": len([p for p in payments if p[1] in kept_orders]),
        "kept_payment_ids": sorted(p[0] for p in payments if p[1] in kept_orders),
        "payments": [list(p) for p in payments],
    }


_crm_data = _crm()
_CRM_DB = _db(_CRM_SCHEMA, dict(zip(["customers", "orders", "payments"], _crm_data)))

_REPAIR_SOLUTION = """python3 - <<'EOF'
import sqlite3

con = sqlite3.connect("/app/customers.sqlite")
con.execute("PRAGMA foreign_keys = OFF")
with con:
    rows = con.execute("SELECT id, email, created_at FROM customers").fetchall()
    groups = {}
    for cid, email, created in rows:
        groups.setdefault(email.strip().lower(), []).append((created, cid))
    for email, members in groups.items():
        members.sort()
        keep = members[0][1]
        for _, cid in members[1:]:
            con.execute("UPDATE orders SET customer_id = ? WHERE customer_id = ?", (keep, cid))
            con.execute("DELETE FROM customers WHERE id = ?", (cid,))
        con.execute("UPDATE customers SET email = ? WHERE id = ?", (email, keep))
    con.execute("CREATE TABLE unmatched_payments AS SELECT * FROM payments WHERE 0")
    con.execute("INSERT INTO unmatched_payments SELECT * FROM payments WHERE order_id NOT IN (SELECT id FROM orders)")
    con.execute("DELETE FROM payments WHERE order_id NOT IN (SELECT id FROM orders)")
    orphans = "SELECT id FROM orders WHERE customer_id NOT IN (SELECT id FROM customers)"
    con.execute(f"DELETE FROM payments WHERE order_id IN ({orphans})")
    con.execute(f"DELETE FROM orders WHERE id IN ({orphans})")
    con.execute("CREATE UNIQUE INDEX customers_email_unique ON customers(email)")
print(con.execute("PRAGMA foreign_key_check").fetchall(), con.execute("PRAGMA integrity_check").fetchone())
EOF
"""

_REPAIR_TESTS = '''
import sqlite3

EXPECTED = {expected!r}


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
    got = {{email: cid for cid, email in _con().execute("SELECT id, email FROM customers")}}
    assert got == EXPECTED["survivors"]


def test_orders_moved_to_the_survivor():
    got = {{}}
    for oid, cid in _con().execute("SELECT id, customer_id FROM orders ORDER BY id"):
        got.setdefault(cid, []).append(oid)
    assert got == {{int(k): v for k, v in EXPECTED["orders_by_survivor"].items()}}


def test_orphan_orders_and_their_payments_removed():
    con = _con()
    kept = {{r[0] for r in con.execute("SELECT id FROM orders")}}
    assert kept and not kept & set(EXPECTED["orphan_orders"])
    ids = {{r[0] for r in con.execute("SELECT id FROM payments")}}
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
    original = {{row[0]: row for row in EXPECTED["payments"]}}
    rows = [list(r) for r in _con().execute("SELECT id, order_id, amount_cents, paid_at FROM payments")]
    assert all(original.get(row[0]) == row for row in rows), "a payment was changed"
    assert set(EXPECTED["kept_payment_ids"]) <= {{row[0] for row in rows}}, "a payment that must stay was removed"
'''

_REPAIR = Spec(
    task_id="sqlite-repair-duplicates",
    title="Repair duplicated and orphaned rows, then enforce the constraints",
    difficulty="medium",
    category="sqlite",
    limits={"agent_timeout_s": 1200},
    instruction="""
/app/customers.sqlite (`customers`, `orders`, `payments`) was written for years with foreign keys off, and it shows:

- the same customer appears several times, with emails that differ only in case and surrounding spaces;
- some orders belong to customers that do not exist, and some payments to orders that do not exist.

Repair it in place:

1. Merge every group of customers with the same email (compared trimmed and lower-cased) into one: the one with
   the earliest `created_at` survives (on a tie, the smallest id); its orders and the orders of the others now
   belong to it; the others are deleted. Store every email trimmed and lower-cased.
2. Payments whose order does not exist are moved (same columns and values) into a new table
   `unmatched_payments(id, order_id, amount_cents, paid_at)` and removed from `payments`.
3. Orders whose customer does not exist (after the merge) are deleted, with their payments.
4. Make it impossible to insert a second customer with an existing email (a UNIQUE constraint or index).

Afterwards `PRAGMA foreign_key_check` must report nothing. Other rows and values stay as they are.
""",
    files={"customers.sqlite": _CRM_DB},
    tests=_REPAIR_TESTS.format(expected=_crm_expected(*_crm_data)),
    weights={"test_one_customer_per_email": 1.0, "test_oldest_record_survives": 1.5,
             "test_orders_moved_to_the_survivor": 2.0, "test_orphan_orders_and_their_payments_removed": 1.5,
             "test_unmatched_payments_kept_aside": 1.5, "test_constraints_hold": 1.0},
    guards=["test_kept_payments_unchanged"],
    solution=_REPAIR_SOLUTION,
    dev_tools=True,
    held_out=True,
    tags=["sqlite", "data-repair", "constraints", "binary-fixture"],
)


# --------------------------------------------------------------------------------------------------------------
# 4. sqlite-import-messy-csv: an importer for a messy CSV into a normalised schema, graded on a fresh file.

_EXPENSE_SCHEMA = """CREATE TABLE vendors (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE expenses (
  id INTEGER PRIMARY KEY,
  spent_on TEXT NOT NULL,
  vendor_id INTEGER NOT NULL REFERENCES vendors(id),
  category_id INTEGER NOT NULL REFERENCES categories(id),
  amount_cents INTEGER NOT NULL,
  note TEXT NOT NULL DEFAULT ''
);
CREATE TABLE rejected_rows (line_no INTEGER PRIMARY KEY, raw TEXT NOT NULL);
"""
_VENDORS = ["Acme Corp", "Blue Bottle", "City Transit", "Delta Print", "Evergreen Foods", "Fixit Ltd"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _messy_expenses(seed: int):
    """(csv text, expected expense tuples, expected vendor names, expected category names, rejected line numbers)."""
    rng = random.Random(seed)
    lines = ["\ufeff Date ,VENDOR, category ,Amount , Note"]
    expected, seen = [], set()
    vendor_names: dict[str, str] = {}
    categories: set[str] = set()
    rejected = []
    for _ in range(34):
        y, m, d = 2024, rng.randrange(1, 13), rng.randrange(1, 29)
        style = rng.randrange(3)
        date = [f"{y}-{m:02d}-{d:02d}", f"{d:02d}/{m:02d}/{y}", f"{_MONTHS[m - 1]} {d} {y}"][style]
        vendor = rng.choice(_VENDORS)
        spelling = rng.choice([vendor, vendor.lower(), " " + vendor.upper() + " ", vendor.replace(" ", "  ")])
        cents = rng.randrange(100, 250000)
        refund = rng.random() < 0.15
        whole, frac = divmod(cents, 100)
        amount = rng.choice([f"{whole}.{frac:02d}", f"${whole:,}.{frac:02d}", f"{whole:,}.{frac:02d}"])
        if refund:
            amount = f"({amount})"
            cents = -cents
        category = rng.choice(["travel", "Travel ", "food", "FOOD", "office", "", " "])
        note = rng.choice(["", "team lunch", "taxi, airport", "toner \"XL\"", "misc"])
        row = [date, spelling, category, amount, note]
        if rng.random() < 0.1:
            row[3] = rng.choice(["n/a", "", "12.3.4"])
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(row)
        lines.append(buf.getvalue())
        if rng.random() < 0.12:
            lines.append(buf.getvalue())  # an exact duplicate line
        if rng.random() < 0.08:
            lines.append("")  # a blank line
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        date, spelling, category, amount, note = next(csv.reader([line]))
        text = amount.strip()
        negative = text.startswith("(") and text.endswith(")")
        text = text.strip("()").replace("$", "").replace(",", "")
        try:
            if not text or text.count(".") > 1:
                raise ValueError(text)
            value = int((Decimal(text) * 100).to_integral_value(ROUND_HALF_UP)) * (-1 if negative else 1)
        except Exception:
            rejected.append(number)
            continue
        key = " ".join(spelling.split()).lower()
        vendor_names.setdefault(key, " ".join(spelling.split()))
        cat = category.strip().lower() or "uncategorized"
        categories.add(cat)
        if "-" in date:
            iso = date
        elif "/" in date:
            iso = f"{date[6:10]}-{date[3:5]}-{date[0:2]}"
        else:
            mon, day, year = date.split()
            iso = f"{year}-{_MONTHS.index(mon) + 1:02d}-{int(day):02d}"
        item = (iso, vendor_names[key], cat, value, note.strip())
        if item in seen:
            continue
        seen.add(item)
        expected.append(item)
    return "\n".join(lines) + "\n", expected, sorted(vendor_names.values()), sorted(categories), rejected


_exp_main = _messy_expenses(8)
_exp_fresh = _messy_expenses(91)

_IMPORT_PY = r'''#!/usr/bin/env python3
"""Import a messy expenses CSV into the normalised schema: import.py CSV DB."""
import csv
import sqlite3
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def parse_date(text):
    text = text.strip()
    if "-" in text:
        y, m, d = text.split("-")
    elif "/" in text:
        d, m, y = text.split("/")
    else:
        mon, d, y = text.split()
        m = MONTHS.index(mon[:3].title()) + 1
    return f"{int(y):04d}-{int(m):02d}-{int(d):02d}"


def parse_cents(text):
    text = text.strip()
    negative = text.startswith("(") and text.endswith(")")
    text = text.strip("()").strip().replace("$", "").replace(",", "")
    if not text or text.count(".") > 1:
        raise ValueError(text)
    cents = int((Decimal(text) * 100).to_integral_value(ROUND_HALF_UP))
    return -cents if negative else cents


def main(csv_path, db_path):
    Path(db_path).unlink(missing_ok=True)
    con = sqlite3.connect(db_path)
    con.executescript(Path("/app/schema.sql").read_text())
    lines = Path(csv_path).read_text(encoding="utf-8-sig").splitlines()
    header = [h.strip().lower() for h in next(csv.reader([lines[0]]))]
    vendors, categories, seen = {}, {}, set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        row = dict(zip(header, next(csv.reader([line]))))
        try:
            date = parse_date(row["date"])
            cents = parse_cents(row["amount"])
        except Exception:
            con.execute("INSERT INTO rejected_rows VALUES (?, ?)", (number, line))
            continue
        name = " ".join(row["vendor"].split())
        if name.lower() not in vendors:
            vendors[name.lower()] = con.execute("INSERT INTO vendors (name) VALUES (?)", (name,)).lastrowid
        category = row["category"].strip().lower() or "uncategorized"
        if category not in categories:
            categories[category] = con.execute("INSERT INTO categories (name) VALUES (?)", (category,)).lastrowid
        item = (date, vendors[name.lower()], categories[category], cents, row["note"].strip())
        if item in seen:
            continue
        seen.add(item)
        con.execute("INSERT INTO expenses (spent_on, vendor_id, category_id, amount_cents, note) VALUES (?, ?, ?, ?, ?)", item)
    con.commit()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''

_IMPORT_TESTS = '''
import sqlite3

EXPECTED = {expected!r}
FRESH = {fresh!r}
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
'''


def _expense_truth(data):
    return {"expenses": [list(e) for e in data[1]], "vendors": data[2], "categories": data[3], "rejected": data[4]}


_IMPORT = Spec(
    task_id="sqlite-import-messy-csv",
    title="Import a messy CSV into a normalised SQLite schema",
    difficulty="medium",
    category="sqlite",
    limits={"agent_timeout_s": 1200},
    instruction="""
Write /app/import.py: `python3 /app/import.py CSV DB` creates the SQLite database DB (replacing any file there)
with the schema in /app/schema.sql (run it as it is) and imports the expenses CSV into it. Then run it on
/app/expenses.csv to make /app/expenses.db. It will also be run on other files of the same kind.

The CSV is messy: it may start with a byte-order mark, header names have stray spaces and any case
(`date, vendor, category, amount, note`), and there are blank lines. Rules:

- `spent_on`: ISO `YYYY-MM-DD`. Dates come as `2024-03-05`, `05/03/2024` (day first) or `Mar 5 2024`.
- `amount_cents`: the amount in whole cents. Amounts may have a `$` sign and thousands separators (`$1,234.50`);
  an amount in parentheses is negative (`(12.00)` is -1200).
- `vendors`: a vendor is the name with surrounding spaces removed and inner runs of spaces collapsed to one,
  compared case-insensitively; its stored name is the first spelling seen in the file (trimmed and collapsed,
  its case as written). Vendors and categories come only from imported rows (not from rejected ones).
- `categories`: trimmed and lower-cased; an empty category is `uncategorized`.
- `note`: trimmed (it may be empty).
- An expense that is identical to one already imported (same date, vendor, category, amount and note, read by
  the rules above) is skipped.
- A row whose date or amount cannot be read goes to `rejected_rows(line_no, raw)` instead: its line number in the
  file (the header is line 1; blank lines count) and the line exactly as it is in the file.

Do not change /app/expenses.csv or /app/schema.sql.
""",
    files={"expenses.csv": _exp_main[0], "schema.sql": _EXPENSE_SCHEMA},
    test_files={"fresh.csv": _exp_fresh[0]},
    tests=_IMPORT_TESTS.format(expected=_expense_truth(_exp_main), fresh=_expense_truth(_exp_fresh)),
    weights={"test_app_database_imported": 1.5, "test_fresh_dates_and_amounts": 1.5, "test_fresh_rows_exact": 2.0,
             "test_fresh_vendors_and_categories": 1.0, "test_fresh_rejected_rows": 1.0, "test_schema_as_given": 0.5},
    guards=["test_inputs_unchanged"],
    solution=f"""cat > /app/import.py <<'PY'
{_IMPORT_PY}PY
python3 /app/import.py /app/expenses.csv /app/expenses.db
sqlite3 /app/expenses.db 'SELECT count(*) FROM expenses; SELECT * FROM rejected_rows;'
""",
    dev_tools=True,
    harbor=True,
    tags=["sqlite", "csv", "import", "normalisation"],
)


# --------------------------------------------------------------------------------------------------------------
# 5. sqlite-view-trigger (held out): a balances view, an overdraft trigger and an owner-change log.

_BANK_SCHEMA = """
CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, opened TEXT NOT NULL);
CREATE TABLE transactions (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id),
                           kind TEXT NOT NULL CHECK (kind IN ('deposit', 'withdrawal')),
                           amount_cents INTEGER NOT NULL CHECK (amount_cents > 0), at TEXT NOT NULL);
"""


def _bank(seed: int):
    rng = random.Random(seed)
    owners = ["ines", "jakob", "keiko", "luis", "maren", "nils", "olga", "pavel", "rui"]
    accounts = [(i, o, f"2022-0{rng.randrange(1, 10)}-15") for i, o in enumerate(rng.sample(owners, 7), start=1)]
    txs = []
    balances = {a[0]: 0 for a in accounts}
    tid = 1
    for a in accounts[:-2]:  # the last two accounts never move money
        for _ in range(rng.randrange(3, 9)):
            if balances[a[0]] > 2000 and rng.random() < 0.4:
                kind, amount = "withdrawal", rng.randrange(100, balances[a[0]])
                balances[a[0]] -= amount
            else:
                kind, amount = "deposit", rng.randrange(500, 60000)
                balances[a[0]] += amount
            txs.append((tid, a[0], kind, amount, f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} 09:00:00"))
            tid += 1
    last = {}
    for t in txs:
        last[t[1]] = max(last.get(t[1], ""), t[4])
    view = {a[0]: [a[1], balances[a[0]], last.get(a[0])] for a in accounts}
    return accounts, txs, view


_bank_main = _bank(3)
_bank_fresh = _bank(44)
_BANK_DB = _db(_BANK_SCHEMA, {"accounts": _bank_main[0], "transactions": _bank_main[1]})
_BANK_FRESH_DB = _db(_BANK_SCHEMA, {"accounts": _bank_fresh[0], "transactions": _bank_fresh[1]})

_BANK_SQL = """CREATE VIEW account_balances AS
SELECT a.id AS account_id, a.owner AS owner,
       COALESCE(SUM(CASE t.kind WHEN 'deposit' THEN t.amount_cents ELSE -t.amount_cents END), 0) AS balance_cents,
       MAX(t.at) AS last_activity
FROM accounts a LEFT JOIN transactions t ON t.account_id = a.id
GROUP BY a.id;

CREATE TABLE owner_changes (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, old_owner TEXT NOT NULL,
                            new_owner TEXT NOT NULL);

CREATE TRIGGER no_overdraft BEFORE INSERT ON transactions
WHEN NEW.kind = 'withdrawal'
  AND NEW.amount_cents > (SELECT balance_cents FROM account_balances WHERE account_id = NEW.account_id)
BEGIN
  SELECT RAISE(ABORT, 'insufficient funds');
END;

CREATE TRIGGER log_owner_change AFTER UPDATE OF owner ON accounts
WHEN OLD.owner IS NOT NEW.owner
BEGIN
  INSERT INTO owner_changes (account_id, old_owner, new_owner) VALUES (OLD.id, OLD.owner, NEW.owner);
END;
"""

_BANK_TESTS = '''
import base64
import shutil
import sqlite3

EXPECTED = {expected!r}
FRESH = {fresh!r}


def _fixture(tmp_path, name):
    """A database shipped beside the tests (base64 text), written out to tmp_path."""
    target = tmp_path / name
    target.write_bytes(base64.b64decode((Path(__file__).resolve().parent / f"{{name}}.b64").read_text()))
    return target


def _copy(tmp_path, source="/app/ledger.sqlite"):
    target = tmp_path / "bank.db"
    shutil.copy(source, target)
    return sqlite3.connect(target)


def _view(con):
    return {{r[0]: [r[1], r[2], r[3]] for r in con.execute(
        "SELECT account_id, owner, balance_cents, last_activity FROM account_balances")}}


def test_view_balances():
    got = _view(sqlite3.connect("file:/app/ledger.sqlite?mode=ro", uri=True))
    moving = {{int(k): v for k, v in EXPECTED.items() if v[2] is not None}}
    assert {{k: v for k, v in got.items() if k in moving}} == moving


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
    assert _view(con) == {{int(k): v for k, v in FRESH.items()}}
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
    assert con.execute("SELECT count(*), sum(amount_cents) FROM transactions").fetchone() == {totals!r}
    assert con.execute("SELECT count(*) FROM accounts").fetchone()[0] == {n_accounts}
'''

_VIEW = Spec(
    task_id="sqlite-view-trigger",
    title="A balances view and two triggers in a SQLite bank ledger",
    difficulty="medium",
    category="sqlite",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/ledger.sqlite has `accounts(id, owner, opened)` and `transactions(id, account_id, kind, amount_cents, at)`, where
`kind` is `deposit` or `withdrawal` and the amount is always positive. Write /app/bank_objects.sql and apply it to
/app/ledger.sqlite (it must also work when run once on another database with the same tables). It creates:

1. a view `account_balances(account_id, owner, balance_cents, last_activity)`: one row per account, deposits
   minus withdrawals, with `balance_cents` 0 and `last_activity` NULL for an account without transactions, and
   `last_activity` the latest `at` otherwise;
2. a trigger that rejects a withdrawal larger than the account's balance, failing the INSERT with the message
   `insufficient funds`;
3. a table `owner_changes(id INTEGER PRIMARY KEY, account_id, old_owner, new_owner)` and a trigger that adds a row
   to it every time an account's owner changes (other updates add nothing).

Existing accounts and transactions stay as they are.
""",
    files={"ledger.sqlite": _BANK_DB},
    test_files={"fresh_bank.db.b64": base64.b64encode(_BANK_FRESH_DB).decode()},
    tests=_BANK_TESTS.format(expected={str(k): v for k, v in _bank_main[2].items()},
                             fresh={str(k): v for k, v in _bank_fresh[2].items()},
                             totals=(len(_bank_main[1]), sum(t[3] for t in _bank_main[1])),
                             n_accounts=len(_bank_main[0])),
    weights={"test_view_balances": 1.5, "test_view_keeps_idle_accounts": 1.0, "test_overdraft_rejected": 1.5,
             "test_owner_changes_logged": 1.5, "test_sql_file_builds_on_another_database": 1.5},
    guards=["test_existing_rows_unchanged"],
    solution=f"""cat > /app/bank_objects.sql <<'SQL'
{_BANK_SQL}SQL
sqlite3 /app/ledger.sqlite < /app/bank_objects.sql
sqlite3 /app/ledger.sqlite 'SELECT * FROM account_balances;'
""",
    dev_tools=True,
    held_out=True,
    tags=["sqlite", "view", "trigger", "binary-fixture"],
)

# --------------------------------------------------------------------------------------------------------------
# 6. sqlite-bom-rollup: a recursive query over a bill of materials (shared subassemblies, quantities multiplied
#    down the tree, labour cost on assemblies), kept as SQL and run on another database.

_BOM_SCHEMA = """
CREATE TABLE parts (id TEXT PRIMARY KEY, name TEXT NOT NULL, is_product INTEGER NOT NULL DEFAULT 0,
                    cost_cents INTEGER);
CREATE TABLE components (assembly_id TEXT NOT NULL REFERENCES parts(id), part_id TEXT NOT NULL REFERENCES parts(id),
                         qty INTEGER NOT NULL CHECK (qty > 0), PRIMARY KEY (assembly_id, part_id));
"""


def _bom(seed: int):
    rng = random.Random(seed)
    leaves = [(f"L{n:02d}", f"leaf {n}", 0, rng.randrange(5, 900)) for n in range(12)]
    subs = []
    edges = []
    for n in range(6):  # subassemblies over leaves and earlier subassemblies (a DAG: shared parts, no cycles)
        sid = f"S{n:02d}"
        subs.append((sid, f"sub {n}", 0, rng.choice([None, None, rng.randrange(10, 200)])))
        pool = [p[0] for p in leaves] + [s[0] for s in subs[:-1]]
        for part in rng.sample(pool, rng.randrange(2, 5)):
            edges.append((sid, part, rng.randrange(1, 5)))
    products = []
    for n in range(5):
        pid = f"P{n:02d}"
        products.append((pid, f"product {n}", 1, rng.choice([None, rng.randrange(100, 900)])))
        pool = [s[0] for s in subs] + [p[0] for p in leaves]
        for part in rng.sample(pool, rng.randrange(2, 5)):
            edges.append((pid, part, rng.randrange(1, 4)))
    products.append(("P09", "product without parts", 1, 4321))
    parts = leaves + subs + products
    cost = {p[0]: p[3] for p in parts}
    children = defaultdict(list)
    for a, p, q in edges:
        children[a].append((p, q))

    def total(part):
        own = cost[part] or 0
        return own + sum(q * total(c) for c, q in children[part])

    def levels(part):
        return 1 + max((levels(c) for c, _ in children[part]), default=0)

    def leaf_count(part):  # distinct leaf parts (parts with no components) it needs
        if not children[part]:
            return {part}
        found = set()
        for c, _ in children[part]:
            found |= leaf_count(c)
        return found

    report = [[p[0], str(total(p[0])), str(levels(p[0])), str(len(leaf_count(p[0]) - ({p[0]} if not children[p[0]] else set())))]
              for p in sorted(products)]
    rng.shuffle(parts)
    rng.shuffle(edges)
    return parts, edges, report


_bom_main = _bom(12)
_bom_fresh = _bom(99)
_BOM_DB = _db(_BOM_SCHEMA, {"parts": _bom_main[0], "components": _bom_main[1]})
_BOM_FRESH_DB = _db(_BOM_SCHEMA, {"parts": _bom_fresh[0], "components": _bom_fresh[1]})

_ROLLUP_SQL = """WITH RECURSIVE
  walk(product_id, part_id, mult, depth) AS (
    SELECT id, id, 1, 1 FROM parts WHERE is_product = 1
    UNION ALL
    SELECT w.product_id, c.part_id, w.mult * c.qty, w.depth + 1
    FROM walk w JOIN components c ON c.assembly_id = w.part_id
  )
SELECT w.product_id AS product,
       SUM(w.mult * COALESCE(p.cost_cents, 0)) AS cost_cents,
       MAX(w.depth) AS levels,
       COUNT(DISTINCT CASE WHEN w.depth > 1 AND NOT EXISTS (SELECT 1 FROM components k WHERE k.assembly_id = w.part_id)
                           THEN w.part_id END) AS leaf_parts
FROM walk w JOIN parts p ON p.id = w.part_id
GROUP BY w.product_id
ORDER BY w.product_id;
"""

_BOM_TESTS = '''
import base64
import csv
import sqlite3

EXPECTED = {expected!r}
FRESH = {fresh!r}


def _fixture(tmp_path, name):
    target = tmp_path / name
    target.write_bytes(base64.b64decode((Path(__file__).resolve().parent / f"{{name}}.b64").read_text()))
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
'''

_BOM = Spec(
    task_id="sqlite-bom-rollup",
    title="Roll up a bill of materials with a recursive SQLite query",
    difficulty="medium",
    category="sqlite",
    limits={"agent_timeout_s": 1200},
    instruction="""
/app/bom.db is a bill of materials: `parts(id, name, is_product, cost_cents)` and
`components(assembly_id, part_id, qty)`, meaning one `assembly_id` needs `qty` of `part_id`. Assemblies nest to
any depth and share subassemblies; there are no cycles. A part's `cost_cents` is its own cost (for an assembly:
the labour to put it together); NULL counts as 0.

Write one SQL statement (a SELECT, recursive CTEs allowed) to /app/rollup.sql and its result to /app/rollup.csv
with the header `product,cost_cents,levels,leaf_parts`: one row per product (`is_product = 1`), ordered by id:

- `cost_cents`: what one unit costs in total: its own cost plus, for each component, `qty` times that
  component's total cost, all the way down;
- `levels`: the number of levels of its tree, counting the product itself (a product without components is 1);
- `leaf_parts`: how many distinct parts without components of their own it needs, directly or not (0 for a product
  without components).

The query must not depend on this database's data: it will be run on another bill of materials. Do not change
/app/bom.db.
""",
    files={"bom.db": _BOM_DB},
    test_files={"fresh_bom.db.b64": base64.b64encode(_BOM_FRESH_DB).decode()},
    tests=_BOM_TESTS.format(expected=_bom_main[2], fresh=_bom_fresh[2]),
    weights={"test_products_listed": 0.5, "test_rolled_up_costs": 2.0, "test_levels": 1.0, "test_leaf_parts": 1.0,
             "test_query_on_another_bill_of_materials": 2.0},
    guards=["test_database_unchanged"],
    solution=f"""cat > /app/rollup.sql <<'SQL'
{_ROLLUP_SQL}SQL
python3 - <<'EOF'
import csv
import sqlite3

con = sqlite3.connect("file:/app/bom.db?mode=ro", uri=True)
rows = con.execute(open("/app/rollup.sql").read()).fetchall()
with open("/app/rollup.csv", "w", newline="") as handle:
    out = csv.writer(handle)
    out.writerow(["product", "cost_cents", "levels", "leaf_parts"])
    out.writerows(rows)
EOF
cat /app/rollup.csv
""",
    dev_tools=True,
    tags=["sqlite", "sql", "recursive-cte", "binary-fixture"],
)

TASKS: list[Spec] = [_MIGRATE, _REPORT, _REPAIR, _IMPORT, _VIEW, _BOM]
