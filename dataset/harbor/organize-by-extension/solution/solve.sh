#!/bin/bash
cd /app/inbox
for f in *; do
  [ -f "$f" ] || continue
  case "$f" in
    *.*) ext=$(printf '%s' "${f##*.}" | tr 'A-Z' 'a-z') ;;
    *) ext=other ;;
  esac
  mkdir -p "$ext" && mv -- "$f" "$ext/"
done
