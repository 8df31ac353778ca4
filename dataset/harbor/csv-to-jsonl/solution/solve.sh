#!/bin/bash
python3 - <<'EOF'
import csv
import json

with open("/app/people.csv", newline="", encoding="utf-8") as src, open("/app/people.jsonl", "w", encoding="utf-8") as dst:
    for row in csv.DictReader(src):
        record = {k: (v if v != "" else None) for k, v in row.items()}
        record["id"], record["age"] = int(record["id"]), int(record["age"])
        dst.write(json.dumps(record, ensure_ascii=False) + "\n")
EOF
