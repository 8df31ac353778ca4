#!/bin/bash
# Count the lines of /app/users.txt that start with "admin:" and print the count.
count=0
cat /app/users.txt | while read -r line; do
  case "$line" in
    admin:*) count=$((count + 1)) ;;
  esac
done
echo "$count"
