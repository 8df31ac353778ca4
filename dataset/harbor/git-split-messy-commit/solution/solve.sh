#!/bin/bash
cd /app/repo
base=$(git rev-parse HEAD~2); wip=$(git rev-parse HEAD~1); top=$(git rev-parse HEAD)
author=$(git log -1 --format='%an <%ae>' "$wip")
git reset -q --hard "$base"
git checkout "$wip" -- parser.py && git commit -q --author="$author" -m "Fix blank-line handling in parser"
git checkout "$wip" -- export.py && git commit -q --author="$author" -m "Add JSON export"
git checkout "$wip" -- README.md && git commit -q --author="$author" -m "Document JSON export"
git cherry-pick "$top"
git log --format='%h %an %s' -6
