#!/bin/bash
cat > /app/join.py <<'EOF'
'''python3 join.py USERS.csv EVENTS.csv: events per country.

USERS.csv: id,name,country. EVENTS.csv: user_id,kind. For every country prints
`COUNTRY EVENTS ACTIVE_USERS` (events of its users, and how many distinct users had any), countries in
alphabetical order; events whose user_id is not in USERS.csv are counted under the country `unknown`
(whose ACTIVE_USERS counts the distinct unknown ids), printed last.
'''

import csv
import sys


def main():
    # A dict lookup per event instead of a scan of all users; sets for the distinct users; one join at the end.
    with open(sys.argv[1], newline="") as handle:
        country_of = {}
        for user in csv.DictReader(handle):
            country_of[user["id"]] = user["country"]  # a later row for the same id wins, as before
    report = {}
    with open(sys.argv[2], newline="") as handle:
        for event in csv.DictReader(handle):
            uid = event["user_id"]
            entry = report.setdefault(country_of.get(uid, "unknown"), [0, set()])
            entry[0] += 1
            entry[1].add(uid)
    order = sorted(c for c in report if c != "unknown") + (["unknown"] if "unknown" in report else [])
    sys.stdout.write("".join(f"{c} {report[c][0]} {len(report[c][1])}\n" for c in order))


main()
EOF
