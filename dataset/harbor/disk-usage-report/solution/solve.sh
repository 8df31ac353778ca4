#!/bin/bash
for d in /app/srv/*/; do
  name=$(basename "$d")
  bytes=$(find "$d" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  echo "$name $bytes"
done | sort -k2,2nr > /app/usage.txt
