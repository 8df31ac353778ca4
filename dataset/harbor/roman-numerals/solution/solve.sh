#!/bin/bash
cat > /app/roman.py <<'EOF'
import sys

VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n):
    out = []
    for value, symbol in VALUES:
        while n >= value:
            out.append(symbol)
            n -= value
    return "".join(out)


ROMAN = {to_roman(n): n for n in range(1, 4000)}


def main(arg):
    if arg.isdigit() and 1 <= int(arg) <= 3999:
        print(to_roman(int(arg)))
    elif arg in ROMAN:
        print(ROMAN[arg])
    else:
        print(f"invalid input: {arg!r}", file=sys.stderr)
        sys.exit(2)


main(sys.argv[1] if len(sys.argv) > 1 else "")
EOF
