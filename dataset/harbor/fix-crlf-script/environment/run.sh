#!/bin/bash
echo "start"
wc -l < /app/input.txt
echo "done"
