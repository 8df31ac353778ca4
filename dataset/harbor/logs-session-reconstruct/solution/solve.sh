#!/bin/bash
python3 - <<'EOF'
import datetime as dt
import json
import re
from collections import defaultdict

UTC = dt.timezone.utc
calls = defaultdict(list)  # gateway rid -> [(time, service, rid, status, message)]
parent = {}
records = []
for name in ("cart", "catalog"):
    for line in open(f"/app/logs/{name}.log"):
        m = re.match(r'(\d+) (\w+) rid=(\S+) parent=(\S+) status=(\d+) msg="(.*)"', line)
        records.append((int(m[1]) / 1000, m[2], m[3], m[4], int(m[5]), m[6]))
for line in open("/app/logs/payments.log"):
    m = re.match(r"(\S+ \S+) UTC \[(\w+)\] request=(\S+) caused_by=(\S+) code=(\d+) (.*)", line)
    at = dt.datetime.strptime(m[1], "%d/%b/%Y %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
    service = "payments" if m[2] == "payments" else m[2]
    records.append((at, service, m[3], m[4], int(m[5]), m[6]))
for at, service, rid, par, status, msg in records:
    parent[rid] = par
def root_of(rid):
    while rid in parent:
        rid = parent[rid]
    return rid
for at, service, rid, par, status, msg in records:
    calls[root_of(rid)].append((at, service, rid, status, msg))
out = []
for line in open("/app/logs/gateway.log"):
    m = re.match(r'(\S+) gateway rid=(\S+) session=(\S+) "(\S+) (\S+)" (\d+)', line)
    if m[3] != "sess-4f1c9a":
        continue
    at = dt.datetime.fromisoformat(m[1]).astimezone(UTC)
    stamp = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
    out.append((at, {"rid": m[2], "time": stamp, "method": m[4], "path": m[5], "status": int(m[6]),
                     "services": [c[1] for c in sorted(calls[m[2]])]}))
out.sort(key=lambda item: item[0])
with open("/app/session.jsonl", "w") as handle:
    for _, item in out:
        handle.write(json.dumps(item) + "\n")
failed = next(item for _, item in out if item["status"] >= 500)
deepest = [c for c in calls[failed["rid"]] if c[3] >= 500]
depth = lambda rid: rid.count(".")
cause = max(deepest, key=lambda c: depth(c[2]))
json.dump({"failed_request": failed["rid"], "service": cause[1], "message": cause[4]}, open("/app/root_cause.json", "w"))
EOF
cat /app/session.jsonl /app/root_cause.json
