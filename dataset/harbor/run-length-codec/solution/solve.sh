#!/bin/bash
cat > /app/rle.py <<'EOF'
import sys


def encode(text):
    out, i = [], 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{j - i}{text[i]}")
        i = j
    return "".join(out)


def decode(text):
    out, i = [], 0
    while i < len(text):
        j = i
        while text[j].isascii() and text[j].isdigit():
            j += 1
        out.append(text[j] * int(text[i:j]))
        i = j + 1
    return "".join(out)


data = sys.stdin.buffer.read().decode("utf-8")
sys.stdout.buffer.write((encode(data) if sys.argv[1] == "encode" else decode(data)).encode("utf-8"))
EOF
