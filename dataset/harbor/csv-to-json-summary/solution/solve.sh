#!/bin/bash
set -e
mkdir -p /app/output
python3 - <<'EOF'
import csv
import json

departments = {}
with open("/app/data/employees.csv", newline="", encoding="utf-8") as handle:
    for row in csv.DictReader(handle):
        entry = departments.setdefault(row["department"], {"count": 0, "total_salary": 0, "employees": []})
        entry["count"] += 1
        entry["total_salary"] += int(row["salary"])
        entry["employees"].append(row["name"])
for entry in departments.values():
    entry["employees"].sort()
with open("/app/output/departments.json", "w", encoding="utf-8") as handle:
    json.dump(departments, handle, ensure_ascii=False, indent=2)
EOF
cat /app/output/departments.json
