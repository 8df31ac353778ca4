#!/bin/bash
cd /app/drop
find . -type f -printf x | wc -c > /app/count.txt
find . -type f -printf '%P\0' | LC_ALL=C sort -z > /app/files.list
