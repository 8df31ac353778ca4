#!/bin/bash
awk '/Unhandled exception$/ {getline; sub(/:.*/, ""); print}' /app/app.log | sort | uniq -c | sort -k1,1nr -k2,2 | awk '{print $1, $2}' > /app/exceptions.txt
