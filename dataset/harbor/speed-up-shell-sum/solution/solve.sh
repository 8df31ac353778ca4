#!/bin/bash
cat > /app/sum_column.sh <<'EOF'
#!/bin/bash
# Print the sum of the second column of a whitespace-separated file.
awk '{total += $2} END {print total + 0}' "$1"
EOF
