"""Stage 3: transformed orders -> report.csv: region,month,orders,eur_cents (sorted by region, month)."""

import csv
import json
import sys
from collections import defaultdict


def main(in_path, out_path):
    totals = defaultdict(lambda: [0, 0])
    with open(in_path) as source:
        for line in source:
            order = json.loads(line)
            key = (order["region"], order["month"])
            totals[key][0] += 1
            totals[key][1] += order["eur_cents"]
    with open(out_path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["region", "month", "orders", "eur_cents"])
        for (region, month), (count, cents) in sorted(totals.items()):
            out.writerow([region, month, count, cents])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
