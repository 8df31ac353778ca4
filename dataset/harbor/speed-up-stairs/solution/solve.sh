#!/bin/bash
cat > /app/stairs.py <<'EOF'
import sys


def ways(n):
    """Number of ways to climb n stairs taking 1, 2 or 3 steps at a time."""
    a, b, c = 1, 0, 0  # ways(i), ways(i - 1), ways(i - 2)
    for _ in range(n):
        a, b, c = a + b + c, a, b
    return a


print(ways(int(sys.argv[1])))
EOF
