#!/usr/bin/env python3
"""Print the number of characters (not bytes) and of lines of a text file."""
import sys

path = sys.argv[1]
with open(path, "rb") as handle:
    data = handle.read()
newlines = data.count(b"\n")
print(f"chars={len(data)}")
print(f"lines={newlines}")
