#!/bin/bash
cat > /app/fizz.py <<'EOF'
import sys

for i in range(1, int(sys.argv[1]) + 1):
    words = "".join(word for divisor, word in ((3, "Fizz"), (5, "Buzz"), (7, "Bazz")) if i % divisor == 0)
    print(words or i)
EOF
