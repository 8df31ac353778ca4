#!/bin/bash
awk '{for (i = 1; i <= NF; i++) cell[i] = (NR == 1 ? $i : cell[i] " " $i)} END {for (i = 1; i <= NF; i++) print cell[i]}' /app/matrix.txt > /app/transposed.txt
