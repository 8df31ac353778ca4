#!/bin/bash
python3 - <<'EOF'
import datetime as dt
import json
from collections import Counter

deploys = []
for line in open("/app/logs/deploys.log"):
    stamp, kind, *fields = line.split()
    info = dict(f.split("=", 1) for f in fields)
    if info["service"] == "api":
        deploys.append((dt.datetime.fromisoformat(stamp).timestamp() * 1000, info["version"], info["commit"]))
deploys.sort()
requests = [json.loads(line) for line in open("/app/logs/api_access.jsonl") if line.strip()]
for index, (start, version, commit) in enumerate(deploys):
    end = deploys[index + 1][0] if index + 1 < len(deploys) else float("inf")
    window = [r for r in requests if start <= r["ts_ms"] < end and r["path"] != "/healthz"]
    errors = [r for r in window if r["status"] >= 500]
    rate = len(errors) / len(window)
    if rate > 0.05:
        top = Counter(r["path"] for r in errors).most_common(1)[0][0]
        result = {"version": version, "commit": commit, "error_rate": round(rate, 4), "top_error_path": top}
        json.dump(result, open("/app/spike.json", "w"))
        print(result)
        break
EOF
