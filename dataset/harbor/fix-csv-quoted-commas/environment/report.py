#!/usr/bin/env python3
"""Print the total amount per customer of /app/orders.csv, sorted by customer."""
import sys


def main(path):
    totals = {}
    with open(path) as handle:
        next(handle)
        for line in handle:
            customer, item, amount = line.strip().split(",")
            totals[customer] = totals.get(customer, 0) + float(amount)
    for customer in sorted(totals):
        print(f"{customer}: {totals[customer]:.2f}")


main(sys.argv[1] if len(sys.argv) > 1 else "/app/orders.csv")
