#!/bin/bash
awk -F, 'NR == FNR { if (FNR > 1) name[$1] = $2; next }
FNR == 1 { print "order_id,name,total"; next }
($2 in name) { print $1 "," name[$2] "," $3 }' /app/customers.csv /app/orders.csv > /app/report.csv
