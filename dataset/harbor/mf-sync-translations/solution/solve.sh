#!/bin/bash
python3 - <<'EOF'
import csv
import json
import re
from pathlib import Path

folder = Path("/app/locales")
source = json.loads((folder / "en.json").read_text(encoding="utf-8"))
marks = lambda text: sorted(set(re.findall(r"\{(\w+)\}", text)))
rows = []
for path in sorted(folder.glob("*.json")):
    lang = path.stem
    if lang == "en":
        continue
    catalogue = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for key in source:
        value = catalogue.get(key)
        if value is None:
            rows.append([lang, key, "missing"])
        elif value == "":
            rows.append([lang, key, "empty"])
        elif marks(value) != marks(source[key]):
            rows.append([lang, key, "placeholders"])
        else:
            out[key] = value
    rows += [[lang, key, "obsolete"] for key in catalogue if key not in source]
    path.write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
with open("/app/translation_report.csv", "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["locale", "key", "problem"])
    writer.writerows(sorted(rows))
EOF
cat /app/translation_report.csv
