#!/bin/bash
cd /app/src && find . -type f -name '*.py' -printf '%P\0' | LC_ALL=C sort -z |
  while IFS= read -r -d '' f; do printf '%s %s\n' "$(wc -l < "$f")" "$f"; done > /app/per_file.txt
awk '{s += $1} END {print s + 0}' /app/per_file.txt > /app/answer.txt
