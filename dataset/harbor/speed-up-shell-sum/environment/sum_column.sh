#!/bin/bash
# Print the sum of the second column of a whitespace-separated file.
total=0
while read -r line; do
  value=$(echo "$line" | cut -d' ' -f2)
  total=$(echo "$total + $value" | bc 2>/dev/null || expr $total + $value)
done < "$1"
echo $total
