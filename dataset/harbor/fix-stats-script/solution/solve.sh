#!/bin/bash
# Read every line (the first one was skipped) and ignore blank lines (they crashed float()).
set -e
python3 - <<'EOF'
from pathlib import Path

path = Path("/app/stats.py")
source = path.read_text()
source = source.replace(
    "    for line in lines[1:]:\n        numbers.append(float(line))\n",
    "    for line in lines:\n        if line.strip():\n            numbers.append(float(line))\n",
)
path.write_text(source)
EOF
python3 /app/stats.py
