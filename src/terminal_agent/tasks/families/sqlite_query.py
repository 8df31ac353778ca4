"""Family ``sqlite-query``: write one SQL query for a question about a shop database.

/app/shop.db (built in the image from a SQL script with python3's sqlite3) has customers, orders
and order items. The agent writes /app/query.sql, one SELECT that answers the question (the key);
the tests run it on the shipped database and on fresh databases of the same schema that the agent
never sees, so only a real query (not a pasted answer) passes.

easy: every order counts.
medium: cancelled orders must be left out, some customers have no orders, items may have a NULL
quantity (counts as 0), and the ordering has a tie-breaker.
"""

from __future__ import annotations

import random
import sqlite3

from terminal_agent.tasks.families.base import (
    DEV_TOOLS,
    Difficulty,
    InstanceParts,
    TaskFamily,
    test_module,
)

SCHEMA = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     placed_on TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE items (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
                    product TEXT NOT NULL, qty INTEGER, price_cents INTEGER NOT NULL);
"""

# key -> (question, columns, SQL with {orders} standing for the orders that count)
QUESTIONS: dict[str, tuple[str, str, str]] = {
    "revenue-per-customer": (
        "the revenue of every customer who has at least one counted order: qty * price_cents summed over the items "
        "of their orders; ordered by revenue, highest first, then by name",
        "name, revenue",
        "SELECT c.name, SUM(COALESCE(i.qty, 0) * i.price_cents) AS revenue FROM customers c JOIN {orders} o "
        "ON o.customer_id = c.id JOIN items i ON i.order_id = o.id GROUP BY c.id ORDER BY revenue DESC, c.name",
    ),
    "orders-per-city": (
        "the number of counted orders per customer city, for cities with at least one; ordered by city",
        "city, orders",
        "SELECT c.city, COUNT(*) FROM customers c JOIN {orders} o ON o.customer_id = c.id GROUP BY c.city ORDER BY c.city",
    ),
    "customers-without-orders": (
        "the names of the customers who have no counted order at all; ordered by name",
        "name",
        "SELECT c.name FROM customers c WHERE NOT EXISTS (SELECT 1 FROM {orders} o WHERE o.customer_id = c.id) "
        "ORDER BY c.name",
    ),
    "units-per-product": (
        "the units sold per product (qty summed over the items of counted orders); ordered by units, highest "
        "first, then by product",
        "product, units",
        "SELECT i.product, SUM(COALESCE(i.qty, 0)) AS units FROM items i JOIN {orders} o ON o.id = i.order_id "
        "GROUP BY i.product ORDER BY units DESC, i.product",
    ),
    "monthly-revenue": (
        "the revenue (qty * price_cents) per month of placed_on, as 'YYYY-MM', for months with counted orders; "
        "ordered by month",
        "month, revenue",
        "SELECT substr(o.placed_on, 1, 7) AS month, SUM(COALESCE(i.qty, 0) * i.price_cents) FROM {orders} o "
        "JOIN items i ON i.order_id = o.id GROUP BY month ORDER BY month",
    ),
    "latest-order": (
        "for every customer with a counted order, the date (placed_on) of their latest counted order; ordered by "
        "that date, newest first, then by name",
        "name, latest",
        "SELECT c.name, MAX(o.placed_on) AS latest FROM customers c JOIN {orders} o ON o.customer_id = c.id "
        "GROUP BY c.id ORDER BY latest DESC, c.name",
    ),
    "repeat-customers": (
        "the customers with at least two counted orders and how many they have; ordered by that number, highest "
        "first, then by name",
        "name, orders",
        "SELECT c.name, COUNT(*) AS n FROM customers c JOIN {orders} o ON o.customer_id = c.id GROUP BY c.id "
        "HAVING n >= 2 ORDER BY n DESC, c.name",
    ),
    "largest-order": (
        "for every customer with a counted order, the value of their largest counted order (an order's value is "
        "the sum of qty * price_cents of its items); ordered by that value, highest first, then by name",
        "name, largest",
        "SELECT name, MAX(value) AS largest FROM (SELECT c.id, c.name, o.id AS oid, SUM(COALESCE(i.qty, 0) * "
        "i.price_cents) AS value FROM customers c JOIN {orders} o ON o.customer_id = c.id JOIN items i ON "
        "i.order_id = o.id GROUP BY o.id) GROUP BY id ORDER BY largest DESC, name",
    ),
    "revenue-per-city": (
        "the revenue (qty * price_cents over the items of counted orders) per customer city, for cities with "
        "counted orders; ordered by revenue, highest first, then by city",
        "city, revenue",
        "SELECT c.city, SUM(COALESCE(i.qty, 0) * i.price_cents) AS revenue FROM customers c JOIN {orders} o "
        "ON o.customer_id = c.id JOIN items i ON i.order_id = o.id GROUP BY c.city ORDER BY revenue DESC, c.city",
    ),
    "average-items-per-order": (
        "per customer with a counted order, the number of item rows of their counted orders divided by the number "
        "of those orders, rounded to 2 decimals with SQL round(); ordered by name",
        "name, average",
        "SELECT c.name, round(CAST(COUNT(i.id) AS REAL) / COUNT(DISTINCT o.id), 2) FROM customers c JOIN {orders} o "
        "ON o.customer_id = c.id LEFT JOIN items i ON i.order_id = o.id GROUP BY c.id ORDER BY c.name",
    ),
}

FIRST = ("Ada", "Bo", "Cy", "Dee", "Eli", "Fay", "Gil", "Hal", "Ivy", "Jo", "Kai", "Lu", "Mo", "Ned", "Oz", "Pam")
LAST = ("Berg", "Cole", "Dahl", "Eng", "Frei", "Gray", "Holm", "Ito", "Jung", "Kahn", "Lund", "Moss")
CITIES = ("Oslo", "Lima", "Bern", "Pune", "Rome", "Graz")
PRODUCTS = ("lamp", "desk", "chair", "mug", "pen", "shelf", "rug", "clock", "vase", "fan")
STATUSES = ("paid", "shipped", "cancelled")


def _script(rng: random.Random, medium: bool, size: int) -> str:
    """An INSERT script of a random shop (every name distinct)."""
    names = rng.sample([f"{a} {b}" for a in FIRST for b in LAST], size)
    lines = [f"INSERT INTO customers VALUES ({i + 1}, '{name}', '{rng.choice(CITIES)}');" for i, name in enumerate(names)]
    order_id = item_id = 0
    for customer in range(1, size + 1):
        if rng.random() < (0.2 if medium else 0.15):
            continue  # a customer without orders
        for _ in range(rng.randrange(1, 5)):
            order_id += 1
            status = rng.choice(STATUSES) if medium else rng.choice(STATUSES[:2])
            day = f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
            lines.append(f"INSERT INTO orders VALUES ({order_id}, {customer}, '{day}', '{status}');")
            for _ in range(rng.randrange(0 if medium else 1, 4)):
                item_id += 1
                qty = "NULL" if medium and rng.random() < 0.1 else str(rng.randrange(1, 6))
                lines.append(
                    f"INSERT INTO items VALUES ({item_id}, {order_id}, '{rng.choice(PRODUCTS)}', {qty}, "
                    f"{rng.randrange(100, 9000)});"
                )
    return "\n".join(lines) + "\n"


def _answer(sql: str, script: str) -> list[list[object]]:
    connection = sqlite3.connect(":memory:")
    connection.executescript(SCHEMA + script)
    return [list(row) for row in connection.execute(sql).fetchall()]


TESTS = '''
import sqlite3


def _run(database):
    query = Path("/app/query.sql").read_text()
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    cursor = connection.execute(query.strip().rstrip(";"))
    assert cursor.description is not None, "query.sql must be one SELECT"
    return len(cursor.description), [list(row) for row in cursor.fetchall()]


def _fresh(tmp_path, script):
    database = tmp_path / "fresh.db"
    connection = sqlite3.connect(database)
    connection.executescript(SCHEMA + script)
    connection.commit()
    connection.close()
    return database


def test_answer_on_the_shipped_database():
    width, rows = _run("/app/shop.db")
    assert width == WIDTH and rows == EXPECTED


def test_answer_on_a_fresh_database(tmp_path):
    assert _run(_fresh(tmp_path, FRESH[0]))[1] == FRESH_EXPECTED[0]


def test_answer_on_another_fresh_database(tmp_path):
    assert _run(_fresh(tmp_path, FRESH[1]))[1] == FRESH_EXPECTED[1]


def test_guard_database_unchanged():
    connection = sqlite3.connect("file:/app/shop.db?mode=ro", uri=True)
    counts = {table: connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in COUNTS}
    assert counts == COUNTS
'''


class SqliteQuery(TaskFamily):
    name = "sqlite-query"
    summary = "Write one SQL query (answering a question about a shop database) that is also run on unseen databases."
    keys = tuple(QUESTIONS)
    key_meaning = "the question asked"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        question, columns, template = QUESTIONS[key]
        orders = "(SELECT * FROM orders WHERE status != 'cancelled')" if medium else "orders"
        sql = template.format(orders=orders)
        for _attempt in range(500):
            script = _script(rng, medium, rng.randrange(8, 14))
            fresh = [_script(rng, medium, rng.randrange(6, 12)) for _ in range(2)]
            answers = [_answer(sql, text) for text in (script, *fresh)]
            if all(answers) and answers[1] != answers[0] and answers[2] != answers[0]:
                break
        else:
            raise RuntimeError(f"sqlite-query {key}: no distinguishing databases drawn")
        rule = (
            "Orders with status 'cancelled' do not count (a counted order is one whose status is not 'cancelled'); "
            "a NULL qty counts as 0."
            if medium
            else "Every order counts."
        )
        instruction = (
            "/app/shop.db is a SQLite database (the sqlite3 command and python3's sqlite3 module are installed) with "
            "the tables customers(id, name, city), orders(id, customer_id, placed_on 'YYYY-MM-DD', status) and "
            f"items(id, order_id, product, qty, price_cents). Write /app/query.sql: one SELECT statement that returns "
            f"{question}. Columns, in this order: {columns}. {rule} The query will also be run on other databases "
            "with the same tables, so it must compute the answer, not list it. Do not modify shop.db."
        )
        counts = {
            table: sum(1 for line in script.splitlines() if line.startswith(f"INSERT INTO {table} "))
            for table in ("customers", "orders", "items")
        }
        build = (
            "RUN python3 -c \"import sqlite3; c = sqlite3.connect('/app/shop.db'); "
            "c.executescript(open('/app/setup/schema.sql').read() + open('/app/setup/data.sql').read()); c.commit()\" "
            "&& rm -rf /app/setup"
        )
        tests = test_module(
            {
                "SCHEMA": SCHEMA,
                "WIDTH": len(columns.split(", ")),
                "EXPECTED": answers[0],
                "FRESH": fresh,
                "FRESH_EXPECTED": answers[1:],
                "COUNTS": counts,
            },
            TESTS,
        )
        return InstanceParts(
            title=f"SQL: {key.replace('-', ' ')}",
            instruction=instruction,
            category="sqlite",
            test_source=tests,
            test_weights={
                "test_answer_on_the_shipped_database": 1.0,
                "test_answer_on_a_fresh_database": 1.5,
                "test_answer_on_another_fresh_database": 1.5,
            },
            guards=["test_guard_database_unchanged"],
            solution=f"#!/bin/bash\ncat > /app/query.sql <<'EOF'\n{sql};\nEOF\n",
            files={"setup/schema.sql": SCHEMA, "setup/data.sql": script},
            dockerfile_steps=[build],
            setup=[DEV_TOOLS],
            outputs=["/app/query.sql"],
            tags=["sqlite", "sql"],
            parameters={"customers": counts["customers"], "orders": counts["orders"], "items": counts["items"]},
        )
