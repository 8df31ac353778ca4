#!/usr/bin/env python3
"""Print count, min, max and mean of the integers in a file (one per line)."""
import sys

numbers = [int(line) for line in open(sys.argv[1])]
print(f"count={len(numbers)}")
print(f"min={min(numbers)}")
print(f"max={max(numbers)}")
print(f"mean={sum(numbers) / len(numbers):.2f}")
