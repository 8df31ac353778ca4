#!/bin/bash
cd /app/worker
python3 - <<'EOF'
from pathlib import Path
path = Path("worker.py")
text = path.read_text()
text = text.replace("import argparse\n", "import argparse\nimport signal\n")
text = text.replace("""say(f"worker {os.getpid()} started")""", """

def reopen(signum, frame):
    global log
    log.close()
    log = open(args.log, "a")
    say("log reopened")


def finish(signum, frame):
    say("worker stopping")
    raise SystemExit(0)


signal.signal(signal.SIGHUP, reopen)
signal.signal(signal.SIGTERM, finish)
say(f"worker {os.getpid()} started")""")
path.write_text(text)
EOF
cat > /app/worker/ctl.sh <<'EOF'
#!/bin/bash
# Control the queue worker: start | stop | status | rotate
PIDFILE=/app/run/worker.pid
LOG=/app/logs/worker.log

running() {
  [ -f "$PIDFILE" ] || return 1
  pid=$(cat "$PIDFILE" 2>/dev/null)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q worker.py "/proc/$pid/cmdline" 2>/dev/null
}

case "$1" in
  start)
    if running; then echo "already running ($pid)"; exit 1; fi
    mkdir -p /app/run /app/logs
    nohup python3 /app/worker/worker.py --queue /app/queue --log "$LOG" < /dev/null > /dev/null 2>&1 &
    echo $! > "$PIDFILE"
    sleep 0.3
    running || { echo "worker failed to start"; rm -f "$PIDFILE"; exit 1; }
    echo "started $(cat "$PIDFILE")" ;;
  stop)
    if ! running; then rm -f "$PIDFILE"; echo "not running"; exit 0; fi
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    rm -f "$PIDFILE"; echo "stopped" ;;
  status)
    if running; then echo "running $pid"; exit 0; fi
    echo "stopped"; exit 3 ;;
  rotate)
    rm -f "$LOG.3"
    [ -f "$LOG.2" ] && mv "$LOG.2" "$LOG.3"
    [ -f "$LOG.1" ] && mv "$LOG.1" "$LOG.2"
    [ -f "$LOG" ] && mv "$LOG" "$LOG.1"
    if running; then kill -HUP "$pid"; fi
    sleep 0.2 ;;
  *) echo "usage: $0 start|stop|status|rotate" >&2; exit 2 ;;
esac
EOF
chmod +x /app/worker/ctl.sh
bash /app/worker/ctl.sh start && bash /app/worker/ctl.sh status && bash /app/worker/ctl.sh stop
