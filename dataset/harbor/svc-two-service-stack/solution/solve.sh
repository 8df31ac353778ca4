#!/bin/bash
sed -i 's|fetch(f"/user/{order|fetch(f"/users/{order|' /app/services/orders/orders.py
cat > /app/start_all.sh <<'EOF'
#!/bin/bash
# Start users (8001) and orders (8002); return once both answer their health checks.
mkdir -p /app/run
USERS_PORT=8001 nohup python3 /app/services/users/users.py > /app/run/users.log 2>&1 &
echo $! > /app/run/users.pid
ORDERS_PORT=8002 USERS_URL=http://127.0.0.1:8001 nohup python3 /app/services/orders/orders.py > /app/run/orders.log 2>&1 &
echo $! > /app/run/orders.pid
for _ in $(seq 100); do
  if curl -fs http://127.0.0.1:8001/health >/dev/null && curl -fs http://127.0.0.1:8002/health >/dev/null; then
    exit 0
  fi
  sleep 0.1
done
echo "services did not become healthy" >&2
exit 1
EOF
cat > /app/stop_all.sh <<'EOF'
#!/bin/bash
for name in orders users; do
  pidfile=/app/run/$name.pid
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$pidfile"
  fi
done
exit 0
EOF
chmod +x /app/start_all.sh /app/stop_all.sh
bash /app/start_all.sh && curl -s http://127.0.0.1:8002/orders/10 && bash /app/stop_all.sh
