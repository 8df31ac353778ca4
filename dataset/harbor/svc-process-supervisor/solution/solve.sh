#!/bin/bash
mkdir -p /app/super
cat > /app/super/supervise.py <<'EOF'
"""Process supervisor.  python3 supervise.py PROGRAMS.ini"""
import configparser
import json
import os
import shlex
import signal
import subprocess
import sys
import time

config = configparser.ConfigParser()
config.read(sys.argv[1])
STATUS = config["supervisor"]["status_file"]
programs = {}
for section in config.sections():
    if not section.startswith("program:"):
        continue
    options = config[section]
    programs[section.split(":", 1)[1]] = {
        "command": options["command"], "restart": options.get("restart", "always"),
        "max_restarts": int(options.get("max_restarts", "3")), "backoff_s": float(options.get("backoff_s", "1")),
        "proc": None, "state": "STARTING", "pid": None, "restarts": 0, "exit_code": None, "due": 0.0}
stopping = False


def write_status():
    data = {name: {key: p[key] for key in ("state", "pid", "restarts", "exit_code")} for name, p in programs.items()}
    tmp = STATUS + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(data, handle, indent=2)
    os.replace(tmp, STATUS)


def launch(p):
    p["proc"] = subprocess.Popen(shlex.split(p["command"]), start_new_session=True)
    p["pid"], p["state"] = p["proc"].pid, "RUNNING"


def stop(signum, frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
for p in programs.values():
    launch(p)
write_status()
while not stopping:
    changed = False
    now = time.time()
    for p in programs.values():
        if p["state"] == "RUNNING" and p["proc"].poll() is not None:
            p["exit_code"] = p["proc"].returncode
            retry = p["restart"] == "always" or (p["restart"] == "on-failure" and p["exit_code"] != 0)
            if p["restart"] == "never" or not retry:
                p["state"] = "EXITED"
            elif p["restarts"] >= p["max_restarts"]:
                p["state"] = "FATAL"
            else:
                p["state"], p["due"] = "BACKOFF", now + p["backoff_s"]
            changed = True
        elif p["state"] == "BACKOFF" and now >= p["due"]:
            p["restarts"] += 1
            launch(p)
            changed = True
    if changed:
        write_status()
    time.sleep(0.05)
for p in programs.values():
    if p["state"] == "RUNNING" and p["proc"].poll() is None:
        p["proc"].terminate()
deadline = time.time() + 5
for p in programs.values():
    if p["proc"] is not None and p["proc"].poll() is None:
        try:
            p["proc"].wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p["proc"].kill()
            p["proc"].wait()
    if p["state"] in ("RUNNING", "BACKOFF"):
        p["state"] = "STOPPED"
write_status()
sys.exit(0)
EOF
