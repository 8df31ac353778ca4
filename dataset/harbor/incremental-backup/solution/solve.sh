#!/bin/bash
cd /app/work
find . -type f -newer /app/last_backup -print0 | while IFS= read -r -d '' f; do
  mkdir -p "/app/incremental/$(dirname -- "$f")"
  cp -p -- "$f" "/app/incremental/$f"
done
touch /app/last_backup
