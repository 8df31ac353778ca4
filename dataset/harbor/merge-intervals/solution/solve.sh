#!/bin/bash
sort -n -k1,1 -k2,2 /app/intervals.txt | awk 'NR == 1 {s = $1; e = $2; next}
$1 <= e {if ($2 > e) e = $2; next}
{print s, e; s = $1; e = $2}
END {if (NR) print s, e}' > /app/merged.txt
