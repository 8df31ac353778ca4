#!/bin/bash
mkdir -p /app/flat
cd /app/nested
find . -type f -print0 | while IFS= read -r -d '' f; do
  rel=${f#./}
  cp -- "$f" "/app/flat/${rel//\//_}"
done
