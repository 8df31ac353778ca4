#!/bin/bash
python3 - <<'EOF'
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
