#!/bin/bash
cd /app/repo
c=$(git log -g --format='%H %s' | awk '$2 == "Add" && /Add low-stock report/ {print $1; exit}')
d=$(git log -g --format='%H %s' | awk '/Report: sort by shortfall/ {print $1; exit}')
git cherry-pick "$c" "$d"
git status --short
