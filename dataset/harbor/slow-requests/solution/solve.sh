#!/bin/bash
awk 'match($0, /took=[0-9]+ms/) { ms = substr($0, RSTART + 5, RLENGTH - 7) + 0; if (ms > 500) print }' /app/requests.log > /app/slow.log
