#!/bin/bash
cat > /app/pairs.py <<'EOF'
'''python3 pairs.py EVENTS.csv WINDOW

EVENTS.csv has the columns user,ts (ts: whole seconds). Two events of the same user form a close pair when
their timestamps are at most WINDOW seconds apart (events with equal timestamps count too). Prints
`total N` (all close pairs), then the five users with the most close pairs, `USER N`, most first, ties by
user name.
'''

import csv
import sys
from collections import defaultdict


def load(path):
    events = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            events.append((row["user"], int(row["ts"])))
    return events


def close_pairs(events, window):
    # Per user, sorted times and a sliding window: O(n log n) instead of comparing every pair.
    times = defaultdict(list)
    for user, ts in events:
        times[user].append(ts)
    counts = {}
    for user, ts in times.items():
        ts.sort()
        start = 0
        total = 0
        for i, t in enumerate(ts):
            while t - ts[start] > window:
                start += 1
            total += i - start
        if total:
            counts[user] = total
    return counts


def main():
    path, window = sys.argv[1], int(sys.argv[2])
    counts = close_pairs(load(path), window)
    print(f"total {sum(counts.values())}")
    for user, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]:
        print(f"{user} {count}")


main()
EOF
