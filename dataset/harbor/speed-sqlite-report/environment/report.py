"""python3 report.py DB: the 20 customers with the largest order totals, and the unshipped orders.

Prints `name,orders,total_cents,unshipped` for each of the 20 (largest total first, ties by name), then a line
`unshipped_orders N` with the number of orders that have no shipment at all.
"""

import sqlite3
import sys

TOP = """
SELECT c.name,
       (SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id) AS n,
       (SELECT SUM(o.amount_cents) FROM orders o WHERE o.customer_id = c.id) AS total,
       (SELECT COUNT(*) FROM orders o
         WHERE o.customer_id = c.id
           AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)) AS unshipped
FROM customers c
WHERE n > 0
ORDER BY total DESC, c.name
LIMIT 20
"""

UNSHIPPED = """
SELECT COUNT(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)
"""


def main():
    db = sqlite3.connect(sys.argv[1])
    for name, n, total, unshipped in db.execute(TOP):
        print(f"{name},{n},{total},{unshipped}")
    print(f"unshipped_orders {db.execute(UNSHIPPED).fetchone()[0]}")


main()
