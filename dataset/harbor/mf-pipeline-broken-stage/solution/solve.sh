#!/bin/bash
cat > /app/pipeline/transform.py <<'PY'
"""Stage 2: orders -> {order_id, region, month, eur_cents} (see README.md for the rules)."""

import csv
import json
import sys
from decimal import ROUND_HALF_UP, Decimal


def main(in_path, rates_path, stores_path, out_path):
    rates = json.load(open(rates_path))
    with open(stores_path, newline="") as handle:
        stores = {row["store_id"].strip().upper(): row["region"] for row in csv.DictReader(handle)}
    with open(in_path) as source, open(out_path, "w") as out:
        for line in source:
            order = json.loads(line)
            region = stores.get(order["store"].strip().upper(), "unassigned")
            eur = Decimal(order["amount"]) / Decimal(str(rates[order["currency"]]))
            cents = int((eur * 100).to_integral_value(ROUND_HALF_UP))
            out.write(json.dumps({"order_id": order["order_id"], "region": region, "month": order["date"][:7],
                                  "eur_cents": cents}) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])
PY
bash /app/run.sh /app/raw /app/ref /app/out
cat /app/out/report.csv
