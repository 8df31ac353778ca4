#!/bin/bash
cd /app/repo
FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f --env-filter '
case "$GIT_AUTHOR_EMAIL" in jdoe@laptop.local|john@oldcorp.example)
  GIT_AUTHOR_NAME="John Doe"; GIT_AUTHOR_EMAIL="john.doe@example.com";; esac
case "$GIT_COMMITTER_EMAIL" in jdoe@laptop.local|john@oldcorp.example)
  GIT_COMMITTER_NAME="John Doe"; GIT_COMMITTER_EMAIL="john.doe@example.com";; esac
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
' --tag-name-filter cat -- --all
git for-each-ref --format='%(refname)' refs/original | while read -r ref; do git update-ref -d "$ref"; done
git log --all --format='%an <%ae> / %cn <%ce>' | sort | uniq -c
