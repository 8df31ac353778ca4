#!/bin/bash
cat > /app/report.sh <<'EOF'
#!/bin/bash
# report.sh ACCESS_LOG: a summary of a web server access log (common log format):
#   requests N
#   status CODE N          one line per status code, in increasing order
#   bytes TOTAL            the sum of the size field ("-" counts as 0)
#   top PATH BYTES         the three paths with the most bytes, most first, ties by path
# The path is the request's path without its query string (?...).
# One awk pass over the log instead of several processes per line.
set -u
LC_ALL=C awk '
{
    requests++
    status[$9]++
    size = ($10 == "-") ? 0 : $10 + 0
    total += size
    path = $7
    sub(/\?.*/, "", path)
    bytes[path] += size
}
END {
    print "requests " requests
    for (code in status) print "S", code, status[code] | "sort -k2,2n"
    close("sort -k2,2n")
    print "bytes " total
    for (p in bytes) print "T", p, bytes[p] | "sort -k3,3nr -k2,2 | head -3"
    close("sort -k3,3nr -k2,2 | head -3")
}' "$1" | sed -e 's/^S /status /' -e 's/^T /top /'
EOF
chmod +x /app/report.sh
