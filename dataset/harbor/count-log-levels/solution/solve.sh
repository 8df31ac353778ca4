#!/bin/bash
set -e
cd /app
awk '{print $2}' logs/server.log | sort | uniq -c | awk '{print $2, $1}' | sort -k2,2nr -k1,1 > report.txt
awk '$2 == "ERROR" {print $4}' logs/server.log | sort -u > errors.txt
cat report.txt errors.txt
