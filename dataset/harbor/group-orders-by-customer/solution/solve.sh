#!/bin/bash
python3 - <<'EOF'
import json

totals = {}
for order in json.load(open("/app/orders.json")):
    totals[order["customer"]] = totals.get(order["customer"], 0) + sum(i["qty"] * i["price_cents"] for i in order["items"])
json.dump(dict(sorted(totals.items())), open("/app/revenue.json", "w"), indent=2)
EOF
