#!/bin/bash
cat > /app/charcount.py <<'EOF'
#!/usr/bin/env python3
"""Print the number of characters (not bytes) and of lines of a text file."""
import sys

with open(sys.argv[1], encoding="utf-8", newline="") as handle:
    text = handle.read()
print(f"chars={len(text)}")
print(f"lines={text.count(chr(10))}")
EOF
