#!/usr/bin/env python3
"""Sum the prices of /app/prices.txt (one decimal price per line) and print the total with two decimals."""
total = 0
for line in open("/app/prices.txt"):
    if line.strip():
        total += float(line)
print("total=" + str(round(total, 2)))
