#!/bin/bash
cat > /app/total.py <<'EOF'
#!/usr/bin/env python3
"""Sum the prices of /app/prices.txt (one decimal price per line) and print the total with two decimals."""
from decimal import ROUND_HALF_UP, Decimal

total = Decimal(0)
for line in open("/app/prices.txt"):
    if line.strip():
        total += Decimal(line.strip())
print("total=" + str(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)))
EOF
