#!/bin/bash
cat > /app/brackets.py <<'EOF'
import sys

PAIRS = {")": "(", "]": "[", "}": "{"}

for line in sys.stdin:
    stack = []
    error = None
    for column, char in enumerate(line.rstrip("\n"), 1):
        if char in "([{":
            stack.append((char, column))
        elif char in PAIRS:
            if stack and stack[-1][0] == PAIRS[char]:
                stack.pop()
            else:
                error = column
                break
    if error is None and stack:
        error = stack[0][1]
    print("ok" if error is None else f"error at {error}")
EOF
