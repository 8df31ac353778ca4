#!/bin/bash
cat > /app/dedupe.py <<'EOF'
import sys

seen = set()
out = []
for line in open(sys.argv[1]):
    if line not in seen:
        seen.add(line)
        out.append(line)
sys.stdout.write("".join(out))
EOF
