#!/bin/bash
cd /app/repo
cat > /tmp/scrub.sh <<'EOF'
rm -f deploy/.env
if [ -f settings.py ]; then
  sed -i 's/^STRIPE_KEY = .*/STRIPE_KEY = os.environ.get("STRIPE_KEY", "")/' settings.py
fi
EOF
FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f --tree-filter 'sh /tmp/scrub.sh' --tag-name-filter cat -- --all
git for-each-ref --format='%(refname)' refs/original | while read -r ref; do git update-ref -d "$ref"; done
rm -f .git/ORIG_HEAD
git reflog expire --expire=now --all
git gc -q --prune=now
git status --short
