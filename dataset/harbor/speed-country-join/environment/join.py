"""python3 join.py USERS.csv EVENTS.csv: events per country.

USERS.csv: id,name,country. EVENTS.csv: user_id,kind. For every country prints
`COUNTRY EVENTS ACTIVE_USERS` (events of its users, and how many distinct users had any), countries in
alphabetical order; events whose user_id is not in USERS.csv are counted under the country `unknown`
(whose ACTIVE_USERS counts the distinct unknown ids), printed last.
"""

import csv
import sys


def main():
    users = list(csv.DictReader(open(sys.argv[1], newline="")))
    events = list(csv.DictReader(open(sys.argv[2], newline="")))
    report = {}
    for event in events:
        country = "unknown"
        for user in users:
            if user["id"] == event["user_id"]:
                country = user["country"]
        entry = report.setdefault(country, [0, []])
        entry[0] += 1
        if event["user_id"] not in entry[1]:
            entry[1].append(event["user_id"])
    out = ""
    for country in sorted(c for c in report if c != "unknown") + (["unknown"] if "unknown" in report else []):
        out = out + f"{country} {report[country][0]} {len(report[country][1])}\n"
    sys.stdout.write(out)


main()
