#!/bin/bash
# Print the sum of the numbers given as arguments.
total=0
for n in "$@"; do
  total="$total+$n"
done
echo "sum: $total"
