"""python3 load.py DB CUSTOMERS.csv ORDERS.csv SHIPMENTS.csv: a fresh database from schema.sql and the CSVs."""

import csv
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    db_path, customers, orders, shipments = sys.argv[1:5]
    Path(db_path).unlink(missing_ok=True)
    db = sqlite3.connect(db_path)
    db.executescript((HERE / "schema.sql").read_text())
    for table, path in (("customers", customers), ("orders", orders), ("shipments", shipments)):
        with open(path, newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader)
            marks = ", ".join("?" for _ in header)
            db.executemany(f"INSERT INTO {table} ({', '.join(header)}) VALUES ({marks})", reader)
    db.commit()
    db.close()


main()
