#!/bin/bash
cat > /app/stats.py <<'EOF'
#!/usr/bin/env python3
"""Print count, min, max and mean of the integers in a file (one per line)."""
import sys

numbers = [int(line) for line in open(sys.argv[1]) if line.strip()]
print(f"count={len(numbers)}")
if numbers:
    print(f"min={min(numbers)}")
    print(f"max={max(numbers)}")
    print(f"mean={sum(numbers) / len(numbers):.2f}")
else:
    print("min=none\nmax=none\nmean=none")
EOF
