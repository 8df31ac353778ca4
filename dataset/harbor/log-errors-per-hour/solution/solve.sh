#!/bin/bash
awk '$3 == "[ERROR]" {print substr($2, 1, 2)}' /app/service.log | sort | uniq -c | awk '{print $2, $1}' > /app/errors_per_hour.txt
