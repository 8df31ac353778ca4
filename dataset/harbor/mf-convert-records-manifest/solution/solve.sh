#!/bin/bash
python3 - <<'EOF'
import csv
import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

src, dst = Path("/app/records"), Path("/app/out")
rows = []
for path in sorted(src.rglob("*.xml")):
    records = []
    for rec in ET.parse(path).getroot().findall("record"):
        if rec.get("deleted") == "true":
            continue
        item = {"id": rec.get("id")}
        for field in rec.findall("field"):
            kind, text = field.get("type", "str"), field.text or ""
            if kind == "int":
                value = int(text)
            elif kind == "bool":
                value = text.strip() == "true"
            elif kind == "list":
                value = [i.text or "" for i in field.findall("item")]
            else:
                value = text
            item[field.get("name")] = value
        records.append(item)
    rel = path.relative_to(src).with_suffix(".json")
    target = dst / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    rows.append([rel.as_posix(), len(records), hashlib.sha256(target.read_bytes()).hexdigest()])
with open(dst / "manifest.csv", "w", newline="") as handle:
    out = csv.writer(handle)
    out.writerow(["path", "records", "sha256"])
    out.writerows(sorted(rows))
EOF
cat /app/out/manifest.csv
