#!/bin/bash
# report.sh ACCESS_LOG: a summary of a web server access log (common log format):
#   requests N
#   status CODE N          one line per status code, in increasing order
#   bytes TOTAL            the sum of the size field ("-" counts as 0)
#   top PATH BYTES         the three paths with the most bytes, most first, ties by path
# The path is the request's path without its query string (?...).
set -u
log=$1
tmp=$(mktemp -d)
: > "$tmp/status"
: > "$tmp/paths"
requests=0
total=0
while IFS= read -r line; do
    requests=$((requests + 1))
    status=$(echo "$line" | awk '{print $9}')
    size=$(echo "$line" | awk '{print $10}')
    path=$(echo "$line" | awk '{print $7}' | cut -d'?' -f1)
    if [ "$size" = "-" ]; then size=0; fi
    total=$(expr $total + $size)
    echo "$status" >> "$tmp/status"
    echo "$path $size" >> "$tmp/paths"
done < "$log"
echo "requests $requests"
sort -n "$tmp/status" | uniq -c | while read -r count code; do
    echo "status $code $count"
done
echo "bytes $total"
awk '{sum[$1] += $2} END {for (p in sum) print p, sum[p]}' "$tmp/paths" | sort -k2,2nr -k1,1 | head -3 | while read -r p b; do
    echo "top $p $b"
done
rm -rf "$tmp"
