#!/bin/bash
sed -i 's/total="$total+$n"/total=$((total + n))/' /app/sum.sh
