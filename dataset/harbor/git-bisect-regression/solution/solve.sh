#!/bin/bash
cd /app/repo
first=$(git rev-list --max-parents=0 main)
git bisect start main "$first"
git bisect run python3 -B check.py > /tmp/bisect.log 2>&1
git rev-parse refs/bisect/bad > /app/first_bad.txt
git bisect reset
git switch -q -c hotfix main
git revert --no-edit "$(cat /app/first_bad.txt)"
git switch -q main
echo "first bad commit: $(cat /app/first_bad.txt)"
