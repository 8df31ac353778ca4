#!/bin/bash
python3 - <<'EOF'
import datetime as dt
import glob
import gzip
import re
from collections import Counter, defaultdict


def lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        return handle.read().splitlines()


def iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


entries = []
for path in glob.glob("/app/logs/worker.log*"):
    for line in lines(path):
        m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) (\w+)\s+\[worker\] (.*)", line)
        if m:
            at = dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S").replace(microsecond=int(m[2]) * 1000, tzinfo=dt.timezone.utc)
            entries.append((at, "worker", m[3], m[4]))
for path in glob.glob("/app/logs/scheduler.log*"):
    for line in lines(path):
        m = re.match(r"\[(\d+)\.(\d{3})\] (\w+): (.*)", line)
        if m:
            at = dt.datetime.fromtimestamp(int(m[1]), dt.timezone.utc).replace(microsecond=int(m[2]) * 1000)
            entries.append((at, "scheduler", m[3].upper(), m[4]))
entries.sort(key=lambda e: (e[0], e[1]))
with open("/app/timeline.txt", "w") as out:
    for at, service, level, msg in entries:
        if level in ("WARN", "ERROR"):
            out.write(f"{iso(at)} {service} {level} {msg}\n")
hours = defaultdict(Counter)
for at, service, level, _ in entries:
    if level == "ERROR":
        hours[at.strftime("%Y-%m-%dT%H:00Z")][service] += 1
with open("/app/errors_per_hour.csv", "w") as out:
    out.write("hour,worker,scheduler\n")
    for hour in sorted(hours):
        out.write(f"{hour},{hours[hour]['worker']},{hours[hour]['scheduler']}\n")
EOF
wc -l /app/timeline.txt /app/errors_per_hour.csv
