#!/bin/bash
python3 - <<'EOF'
import datetime as dt
import json
import re
from collections import defaultdict

ip_of = {}
for line in open("/app/logs/access.log"):
    rid = re.search(r" rid=(\S+)", line).group(1)
    ip_of[rid] = re.search(r" xff=(\S+)", line).group(1)
login_rid = {}
for line in open("/app/logs/app.log"):
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    if fields.get("event") == "login":
        login_rid[fields["session"]] = fields["rid"]
failed = defaultdict(set)
successes = []
for line in open("/app/logs/auth.log"):
    m = re.match(r"(\w{3})\s+(\d+) (\d\d:\d\d:\d\d) \S+ authd\[\d+\]: login (OK|FAIL) user=(\S+) session=(\S+)", line)
    month, day, clock, result, user, session = m.groups()
    ip = ip_of[login_rid[session]]
    local = dt.datetime.strptime(f"2024 {month} {day} {clock}", "%Y %b %d %H:%M:%S").replace(tzinfo=dt.timezone(dt.timedelta(hours=2)))
    if result == "FAIL":
        failed[ip].add(user)
    else:
        successes.append((local.astimezone(dt.timezone.utc), ip, user))
attacker = max(failed, key=lambda ip: len(failed[ip]))
mine = sorted((at, user) for at, ip, user in successes if ip == attacker)
result = {"attacker_ip": attacker, "compromised_accounts": sorted({u for _, u in mine}),
          "first_compromised_account": mine[0][1], "first_compromised_at": mine[0][0].strftime("%Y-%m-%dT%H:%M:%SZ")}
json.dump(result, open("/app/findings.json", "w"), indent=2)
print(result)
EOF
