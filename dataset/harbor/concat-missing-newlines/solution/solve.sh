#!/bin/bash
awk 1 /app/parts/part1.txt /app/parts/part2.txt /app/parts/part3.txt > /app/all.txt
