#!/bin/bash
cat > /app/count_admins.sh <<'EOF'
#!/bin/bash
# Count the lines of /app/users.txt that start with "admin:" and print the count.
count=0
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    admin:*) count=$((count + 1)) ;;
  esac
done < /app/users.txt
echo "$count"
EOF
