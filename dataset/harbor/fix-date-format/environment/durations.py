#!/usr/bin/env python3
"""Print how many days each project of /app/projects.txt took (lines: name start end, dates as YYYY-MM-DD)."""
import datetime as dt

for line in open("/app/projects.txt"):
    name, start, end = line.split()
    first = dt.datetime.strptime(start, "%Y-%d-%m")
    last = dt.datetime.strptime(end, "%Y-%d-%m")
    print(f"{name} {(last - first).days}")
