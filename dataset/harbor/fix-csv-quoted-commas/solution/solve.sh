#!/bin/bash
python3 - <<'EOF'
from pathlib import Path
p = Path("/app/report.py")
s = p.read_text()
s = s.replace("import sys\n", "import csv\nimport sys\n", 1)
s = s.replace("    with open(path) as handle:\n        next(handle)\n        for line in handle:\n            customer, item, amount = line.strip().split(\",\")",
              "    with open(path, newline=\"\") as handle:\n        rows = csv.reader(handle)\n        next(rows)\n        for customer, item, amount in rows:")
p.write_text(s)
EOF
