#!/bin/bash
cat > /app/rotate.sh <<'EOF'
#!/bin/bash
# Keep the newest KEEP (default 2) files of DIR matching *.log; delete the older ones.
DIR=$1
KEEP=${2:-2}
cd "$DIR" || exit 1
find . -maxdepth 1 -type f -name '*.log' -printf '%T@ %P\0' | sort -z -rn | tail -z -n +$((KEEP + 1)) |
  while IFS= read -r -d '' entry; do rm -f -- "${entry#* }"; done
EOF
