#!/bin/bash
cat > /app/import.py <<'PY'
#!/usr/bin/env python3
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
PY
python3 /app/import.py /app/expenses.csv /app/expenses.db
sqlite3 /app/expenses.db 'SELECT count(*) FROM expenses; SELECT * FROM rejected_rows;'
