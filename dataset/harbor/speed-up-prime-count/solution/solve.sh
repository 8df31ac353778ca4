#!/bin/bash
cat > /app/primes.py <<'EOF'
import sys

limit = int(sys.argv[1])
if limit < 3:
    print(0)
    sys.exit()
sieve = bytearray([1]) * limit
sieve[0] = sieve[1] = 0
for n in range(2, int(limit ** 0.5) + 1):
    if sieve[n]:
        sieve[n * n :: n] = bytes(len(range(n * n, limit, n)))
print(sum(sieve))
EOF
