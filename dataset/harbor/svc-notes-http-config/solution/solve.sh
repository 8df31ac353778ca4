#!/bin/bash
cd /app/notes_service
python3 - <<'EOF'
from pathlib import Path
path = Path("app.py")
text = path.read_text()
text = text.replace("with open(name) as handle:", "with open(os.path.join(DATA_DIR, name)) as handle:")
text = text.replace('config["server"]["port"]), Handler)', 'int(config["server"]["port"])), Handler)')
path.write_text(text)
EOF
cat > service.ini <<'EOF'
[server]
host = 127.0.0.1
port = 8088

[storage]
data_dir = /app/data/notes

[auth]
token_file = /app/secrets/token
EOF
cat > /app/start.sh <<'EOF'
#!/bin/bash
# Start the notes service in the background and wait until it answers its health check.
mkdir -p /app/run
nohup python3 /app/notes_service/app.py /app/notes_service/service.ini > /app/run/notes.log 2>&1 &
echo $! > /app/run/notes.pid
for _ in $(seq 50); do
  curl -fs http://127.0.0.1:8088/health > /dev/null && exit 0
  sleep 0.1
done
echo "notes service did not come up" >&2
exit 1
EOF
chmod +x /app/start.sh
bash /app/start.sh && curl -s http://127.0.0.1:8088/health
