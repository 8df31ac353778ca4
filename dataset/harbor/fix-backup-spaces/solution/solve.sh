#!/bin/bash
cat > /app/backup.sh <<'EOF'
#!/bin/bash
# Copy every file of /app/docs into /app/backup, adding the suffix .bak
SRC=/app/docs
DST=/app/backup
mkdir -p "$DST"
for f in "$SRC"/*; do
  [ -f "$f" ] || continue
  cp -- "$f" "$DST/$(basename -- "$f").bak"
done
EOF
bash /app/backup.sh
