"""python3 pairs.py EVENTS.csv WINDOW

EVENTS.csv has the columns user,ts (ts: whole seconds). Two events of the same user form a close pair when
their timestamps are at most WINDOW seconds apart (events with equal timestamps count too). Prints
`total N` (all close pairs), then the five users with the most close pairs, `USER N`, most first, ties by
user name.
"""

import csv
import sys


def load(path):
    events = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            events.append((row["user"], int(row["ts"])))
    return events


def close_pairs(events, window):
    counts = {}
    users = []
    for i in range(len(events)):
        for j in range(i + 1, len(events)):
            user_a, time_a = events[i]
            user_b, time_b = events[j]
            if user_a == user_b and abs(time_a - time_b) <= window:
                if user_a not in users:
                    users.append(user_a)
                counts[user_a] = counts.get(user_a, 0) + 1
    return counts


def main():
    path, window = sys.argv[1], int(sys.argv[2])
    counts = close_pairs(load(path), window)
    print(f"total {sum(counts.values())}")
    for user, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]:
        print(f"{user} {count}")


main()
