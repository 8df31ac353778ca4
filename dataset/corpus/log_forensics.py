"""Log forensics across several sources: correlating logs by request and session ids, timelines over rotated and
gzipped files (gzip bytes shipped as binary fixtures), deploys against error rates, sessions rebuilt from ids."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import random
import zipfile
from collections import Counter, defaultdict

from _spec import Spec

UTC = dt.timezone.utc
_PLUS2 = dt.timezone(dt.timedelta(hours=2))
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def _z(moment: dt.datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------------------------
# 1. logs-correlate-attack: access log (client in X-Forwarded-For) + app log (rid -> session) + auth log
#    (session -> user, result) give the attacking address and the accounts it took over.

def _attack_logs():
    rng = random.Random(1703)
    users = ["petra", "tomasz", "ingrid", "yusuf", "mei", "lars", "aisha", "diego", "olena", "kwame", "sara", "niko",
             "farid", "greta", "hugo", "iris", "jonas", "kaito", "lucia", "marek", "noor", "oscar", "pilar", "ravi"]
    start = dt.datetime(2024, 3, 3, 7, 0, 0, tzinfo=UTC)
    events = []  # (time, ip, path, session, auth result or None, user or None)

    def login(at, ip, user, ok):
        events.append((at, ip, "/login", None, "OK" if ok else "FAIL", user))

    # ordinary users: a failure or two sometimes, then success, from their own address
    for user in users:
        ip = f"192.0.2.{rng.randrange(10, 250)}"
        at = start + dt.timedelta(seconds=rng.randrange(0, 7000))
        for _ in range(rng.choice([0, 0, 0, 1, 2])):
            login(at, ip, user, False)
            at += dt.timedelta(seconds=rng.randrange(5, 40))
        login(at, ip, user, True)
        for _ in range(rng.randrange(1, 6)):
            at += dt.timedelta(seconds=rng.randrange(10, 300))
            events.append((at, ip, rng.choice(["/dashboard", "/reports", "/settings", "/api/items"]), None, None, user))
    # an office behind one address: many users, a few failures each
    office = "198.51.100.20"
    for user in rng.sample(users, 6):
        at = start + dt.timedelta(seconds=rng.randrange(0, 7000))
        login(at, office, user, False)
        login(at + dt.timedelta(seconds=20), office, user, True)
    # one user who forgot a password: many failures for one account
    retry = "192.0.2.251"
    at = start + dt.timedelta(seconds=900)
    for _ in range(27):
        login(at, retry, "petra", False)
        at += dt.timedelta(seconds=rng.randrange(3, 12))
    # a scanner that fails on a handful of accounts and never gets in
    scanner = "203.0.113.90"
    at = start + dt.timedelta(seconds=2000)
    for user in rng.sample(users, 7):
        login(at, scanner, user, False)
        at += dt.timedelta(seconds=2)
    # the attacker: password spraying over many accounts, three successes, then data access
    attacker = "203.0.113.77"
    at = start + dt.timedelta(seconds=3100)
    victims = []
    targets = rng.sample([u for u in users if u != "petra"], 15)
    for index, user in enumerate(targets):
        for _ in range(rng.randrange(1, 3)):
            login(at, attacker, user, False)
            at += dt.timedelta(seconds=rng.randrange(1, 4))
        if index in (4, 9, 13):
            login(at, attacker, user, True)
            victims.append((at, user))
            at += dt.timedelta(seconds=2)
            for path in ("/api/export?all=1", "/settings/mfa"):
                events.append((at, attacker, path, None, None, user))
                at += dt.timedelta(seconds=1)
        at += dt.timedelta(seconds=rng.randrange(20, 90))
    events.sort(key=lambda e: (e[0], e[1], e[2]))

    access, app, auth = [], [], []
    sessions = {}
    agents = ["Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (Macintosh)", "curl/8.4.0", "python-requests/2.31"]
    for n, (at, ip, path, _, result, user) in enumerate(events):
        rid = f"{rng.getrandbits(48):012x}"
        if result is not None:
            session = f"s{rng.getrandbits(40):010x}"
            if result == "OK":
                sessions[(ip, user)] = session
        else:
            session = sessions.get((ip, user), f"s{rng.getrandbits(40):010x}")
        local = at.astimezone(_PLUS2)
        method = "POST" if path == "/login" else "GET"
        agent = "python-requests/2.31" if ip == attacker else rng.choice(agents)
        access.append(f'10.0.0.5 - - [{local.strftime("%d/%b/%Y:%H:%M:%S")} +0200] "{method} {path} HTTP/1.1" 200 '
                      f'{rng.randrange(200, 9000)} "-" "{agent}" rid={rid} xff={ip}')
        stamp = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rng.randrange(0, 1000):03d}Z"
        app.append(f"{stamp} INFO web rid={rid} session={session} event={'login' if result else 'request'} path={path}")
        if result is not None:
            auth.append(f"{_MONTHS[local.month - 1]} {local.day:2d} {local.strftime('%H:%M:%S')} web1 authd[{4100 + n % 7}]: "
                        f"login {result} user={user} session={session} method=password")
    first_at, first_user = min(victims)
    truth = {"attacker_ip": attacker, "compromised_accounts": sorted(u for _, u in victims),
             "first_compromised_account": first_user, "first_compromised_at": _z(first_at)}
    return "\n".join(access) + "\n", "\n".join(app) + "\n", "\n".join(auth) + "\n", truth


_access, _app, _auth, _attack_truth = _attack_logs()

_ATTACK_SOLUTION = r"""python3 - <<'EOF'
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
"""

_ATTACK_TESTS = f'''
TRUTH = {_attack_truth!r}


def _findings():
    data = json.loads(Path("/app/findings.json").read_text())
    assert isinstance(data, dict)
    return data


def test_attacker_ip():
    assert _findings().get("attacker_ip") == TRUTH["attacker_ip"]


def test_compromised_accounts():
    assert _findings().get("compromised_accounts") == TRUTH["compromised_accounts"]


def test_first_compromised_account():
    assert _findings().get("first_compromised_account") == TRUTH["first_compromised_account"]


def test_first_compromised_at():
    assert _findings().get("first_compromised_at") == TRUTH["first_compromised_at"]


def test_logs_unchanged():
    assert all(unchanged(f"/app/logs/{{name}}") for name in ("access.log", "app.log", "auth.log"))
'''

_ATTACK = Spec(
    task_id="logs-correlate-attack",
    title="Correlate three logs to find the attacker and the accounts it took over",
    difficulty="medium",
    category="log-forensics",
    limits={"agent_timeout_s": 1200},
    instruction="""
Someone sprayed passwords at our web app on 3 March 2024 and got into some accounts. /app/logs/ has three logs of
that day:

- `access.log`: the web server's access log. The site sits behind a load balancer (10.0.0.5); every line ends
  with the request id and the client address the load balancer saw.
- `app.log`: the application log, one line per request, with the request id and the session it belongs to.
- `auth.log`: the login service's log (syslog format, local time UTC+02:00), one line per login attempt with the
  user, the result and the session.

The attacker is the client address whose failed logins hit the most distinct accounts. An account is compromised
when the attacker logged into it successfully. Write /app/findings.json:

```json
{"attacker_ip": "...", "compromised_accounts": ["...", "..."], "first_compromised_account": "...",
 "first_compromised_at": "2024-03-03T08:15:02Z"}
```

`compromised_accounts` sorted alphabetically; `first_compromised_at` is the time of the attacker's first successful
login, in UTC. Do not modify the logs.
""",
    files={"logs/access.log": _access, "logs/app.log": _app, "logs/auth.log": _auth},
    tests=_ATTACK_TESTS,
    weights={"test_attacker_ip": 2.0, "test_compromised_accounts": 2.0, "test_first_compromised_account": 1.5,
             "test_first_compromised_at": 1.0},
    guards=["test_logs_unchanged"],
    solution=_ATTACK_SOLUTION,
    harbor=True,
    tags=["logs", "forensics", "security", "correlation"],
)


# --------------------------------------------------------------------------------------------------------------
# 2. logs-rotated-timeline: warnings and errors of two services over rotated, gzipped logs, merged in time order.

_WORKER_MESSAGES = ["job {n} picked up", "job {n} done in {ms} ms", "cache miss for key k{n}", "retrying upload {n}",
                    "lost connection to queue", "disk usage at {p}%", "job {n} failed: timeout", "slow query {ms} ms"]


def _rotated():
    rng = random.Random(4242)
    start = dt.datetime(2024, 5, 6, 9, 0, 0, tzinfo=UTC)
    entries = {"worker": [], "scheduler": []}
    for service in entries:
        at = start
        for _ in range(260):
            at += dt.timedelta(milliseconds=rng.randrange(2000, 60000))
            level = rng.choices(["DEBUG", "INFO", "WARN", "ERROR"], [3, 10, 2, 1])[0]
            msg = rng.choice(_WORKER_MESSAGES).format(n=rng.randrange(1000, 9999), ms=rng.randrange(5, 9000), p=rng.randrange(70, 99))
            trace = []
            if level == "ERROR" and rng.random() < 0.5:
                trace = ["Traceback (most recent call last):", '  File "/srv/app/run.py", line 88, in main',
                         "    handle(job)", "TimeoutError: deadline exceeded"]
            entries[service].append((at, level, msg, trace))
    # the same millisecond in both services (order: by time, then service name)
    w = entries["worker"][100]
    entries["scheduler"].append((w[0], "ERROR", "tick overran by 2 s", []))
    entries["scheduler"].sort(key=lambda e: e[0])

    def worker_line(e):
        at, level, msg, trace = e
        head = f"{at.strftime('%Y-%m-%d %H:%M:%S')},{at.microsecond // 1000:03d} {level:<5} [worker] {msg}"
        return [head] + ["    " + t if not t.startswith(" ") else t for t in trace]

    def scheduler_line(e):
        at, level, msg, trace = e
        stamp = f"{int(at.timestamp())}.{at.microsecond // 1000:03d}"
        return [f"[{stamp}] {level.lower()}: {msg}"] + ["\t" + t.strip() for t in trace]

    files = {}
    for service, render, parts in (("worker", worker_line, [".3.gz", ".2.gz", ".1", ""]), ("scheduler", scheduler_line, [".2.gz", ".1.gz", ""])):
        chunk = len(entries[service]) // len(parts) + 1
        for index, suffix in enumerate(parts):
            text = "\n".join(line for e in entries[service][index * chunk:(index + 1) * chunk] for line in render(e)) + "\n"
            files[f"logs/{service}.log{suffix}"] = _gz(text) if suffix.endswith(".gz") else text
    timeline = []
    for service in sorted(entries):
        for order, (at, level, msg, _) in enumerate(entries[service]):
            if level in ("WARN", "ERROR"):
                stamp = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
                timeline.append(((stamp, service, order), f"{stamp} {service} {level} {msg}"))
    timeline.sort()
    per_hour: dict[str, Counter] = defaultdict(Counter)
    for service in entries:
        for at, level, _, _ in entries[service]:
            if level == "ERROR":
                per_hour[at.strftime("%Y-%m-%dT%H:00Z")][service] += 1
    hours = [[h, per_hour[h]["worker"], per_hour[h]["scheduler"]] for h in sorted(per_hour)]
    return files, [line for _, line in timeline], hours


_rot_files, _rot_timeline, _rot_hours = _rotated()

_ROTATED_SOLUTION = r"""python3 - <<'EOF'
import datetime as dt
import glob
import gzip
import re
from collections import Counter, defaultdict


def lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        return handle.read().splitlines()


def iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


entries = []
for path in glob.glob("/app/logs/worker.log*"):
    for line in lines(path):
        m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) (\w+)\s+\[worker\] (.*)", line)
        if m:
            at = dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S").replace(microsecond=int(m[2]) * 1000, tzinfo=dt.timezone.utc)
            entries.append((at, "worker", m[3], m[4]))
for path in glob.glob("/app/logs/scheduler.log*"):
    for line in lines(path):
        m = re.match(r"\[(\d+)\.(\d{3})\] (\w+): (.*)", line)
        if m:
            at = dt.datetime.fromtimestamp(int(m[1]), dt.timezone.utc).replace(microsecond=int(m[2]) * 1000)
            entries.append((at, "scheduler", m[3].upper(), m[4]))
entries.sort(key=lambda e: (e[0], e[1]))
with open("/app/timeline.txt", "w") as out:
    for at, service, level, msg in entries:
        if level in ("WARN", "ERROR"):
            out.write(f"{iso(at)} {service} {level} {msg}\n")
hours = defaultdict(Counter)
for at, service, level, _ in entries:
    if level == "ERROR":
        hours[at.strftime("%Y-%m-%dT%H:00Z")][service] += 1
with open("/app/errors_per_hour.csv", "w") as out:
    out.write("hour,worker,scheduler\n")
    for hour in sorted(hours):
        out.write(f"{hour},{hours[hour]['worker']},{hours[hour]['scheduler']}\n")
EOF
wc -l /app/timeline.txt /app/errors_per_hour.csv
"""

_ROTATED_TESTS = f'''
TIMELINE = {_rot_timeline!r}
HOURS = {_rot_hours!r}


def _timeline():
    return [line for line in Path("/app/timeline.txt").read_text().splitlines() if line.strip()]


def test_timeline_has_every_warning_and_error():
    got = _timeline()
    assert len(got) == len(TIMELINE) and sorted(got) == sorted(TIMELINE)


def test_gzipped_rotations_included():
    got = set(_timeline())
    early = [line for line in TIMELINE[: len(TIMELINE) // 4]]
    assert early and all(line in got for line in early)


def test_scheduler_epoch_times_converted():
    got = set(_timeline())
    scheduler = [line for line in TIMELINE if " scheduler " in line]
    assert scheduler and all(line in got for line in scheduler)


def test_timeline_in_time_order():
    assert _timeline() == TIMELINE


def test_errors_per_hour():
    rows = [line.split(",") for line in Path("/app/errors_per_hour.csv").read_text().split()]
    assert rows[0] == ["hour", "worker", "scheduler"]
    assert [[r[0], int(r[1]), int(r[2])] for r in rows[1:]] == HOURS


def test_logs_unchanged():
    assert all(unchanged(path) for path in ORIGINAL_SHA256)
'''

_ROTATED = Spec(
    task_id="logs-rotated-timeline",
    title="One timeline of warnings and errors across rotated and gzipped logs",
    difficulty="medium",
    category="log-forensics",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/logs/ holds two services' logs, rotated by logrotate (older files are `.1`, `.2.gz`, ...; some are gzipped):

- `worker.log*`: lines like `2024-05-06 09:00:03,120 ERROR [worker] job 4411 failed: timeout` (UTC);
- `scheduler.log*`: lines like `[1714986003.120] error: tick overran by 2 s` (Unix time in seconds, UTC).

A line that starts with whitespace continues the entry above it (a traceback); it is not an entry.

1. Write /app/timeline.txt: every WARN and ERROR entry of both services, across all the files, one per line as
   `2024-05-06T09:00:03.120Z worker ERROR job 4411 failed: timeout` (UTC with milliseconds, the service, the
   level in upper case, the message), oldest first; entries at the same moment go in service-name order.
2. Write /app/errors_per_hour.csv with the header `hour,worker,scheduler` and one row per hour that has at least
   one ERROR (`2024-05-06T09:00Z,3,1`), oldest first, counting ERROR entries per service.

Leave the logs as they are.
""",
    files=_rot_files,
    tests=_ROTATED_TESTS,
    weights={"test_timeline_has_every_warning_and_error": 1.5, "test_gzipped_rotations_included": 1.0,
             "test_scheduler_epoch_times_converted": 1.0, "test_timeline_in_time_order": 1.5,
             "test_errors_per_hour": 1.5},
    guards=["test_logs_unchanged"],
    solution=_ROTATED_SOLUTION,
    harbor=True,
    tags=["logs", "gzip", "logrotate", "timeline", "binary-fixture"],
)


# --------------------------------------------------------------------------------------------------------------
# 3. logs-deploy-error-spike (held out): which deploy of the api started the 5xx spike.

def _deploys():
    rng = random.Random(606)
    start = dt.datetime(2024, 6, 10, 6, 0, 0, tzinfo=UTC)
    plus1 = dt.timezone(dt.timedelta(hours=1))
    api = [("v2.13.0", 0.004), ("v2.13.1", 0.006), ("v2.14.0", 0.003), ("v2.14.1", 0.081), ("v2.13.1", 0.005)]
    deploy_lines, windows = [], []
    at = start
    commits = {}
    for index, (version, rate) in enumerate(api):
        commit = commits.setdefault(version, f"{rng.getrandbits(28):07x}")
        kind = "rollback" if index == len(api) - 1 else "deploy"
        deploy_lines.append((at, f"{at.astimezone(plus1).isoformat()} {kind} service=api version={version} commit={commit} by={rng.choice(['ana', 'ben', 'cy'])}"))
        windows.append((at, version, commit, rate))
        if index == 2:  # a web deploy just before the bad api deploy
            web_at = at + dt.timedelta(minutes=52)
            deploy_lines.append((web_at, f"{web_at.astimezone(plus1).isoformat()} deploy service=web version=w5.2.0 commit={rng.getrandbits(28):07x} by=ben"))
        at += dt.timedelta(minutes=rng.randrange(50, 80))
    end = at
    deploy_lines.sort()
    requests = []
    paths = ["/v1/orders", "/v1/orders/{id}", "/v1/users/{id}", "/v1/search", "/v1/cart"]
    bad_path = "/v1/search"
    per_window = []
    for index, (w_at, version, commit, rate) in enumerate(windows):
        w_end = windows[index + 1][0] if index + 1 < len(windows) else end
        total = errors = 0
        by_path: Counter = Counter()
        t = w_at
        while True:
            t += dt.timedelta(milliseconds=rng.randrange(2000, 7000))
            if t >= w_end:
                break
            if (t - w_at).total_seconds() < 90 or rng.random() < 0.08:  # health checks (503 while restarting)
                status = 503 if (t - w_at).total_seconds() < 90 else 200
                requests.append((t, "GET", "/healthz", status))
                continue
            path = rng.choice(paths)
            boost = 6 if (rate > 0.05 and path == bad_path) else 1
            status = rng.choice([500, 502, 504]) if rng.random() < rate * boost * (0.55 if rate > 0.05 else 1) else rng.choice([200, 200, 201, 404])
            requests.append((t, rng.choice(["GET", "POST"]) if path != "/v1/search" else "GET", path.replace("{id}", str(rng.randrange(1, 999))), status))
            total += 1
            if status >= 500:
                errors += 1
                by_path[requests[-1][2]] += 1
        per_window.append((version, commit, errors / total, by_path))
    culprit = next(w for w in per_window if w[2] > 0.05)
    before = [w for w in per_window[: per_window.index(culprit)]]
    assert all(w[2] < 0.01 for w in before)
    access = "\n".join(json.dumps({"ts_ms": int(t.timestamp() * 1000), "method": m, "path": p, "status": s})
                       for t, m, p, s in requests) + "\n"
    truth = {"version": culprit[0], "commit": culprit[1], "error_rate": round(culprit[2], 4),
             "top_error_path": culprit[3].most_common(1)[0][0]}
    assert culprit[3].most_common(2)[0][1] > culprit[3].most_common(2)[1][1]
    return "\n".join(line for _, line in deploy_lines) + "\n", access, truth


_deploy_log, _api_access, _spike_truth = _deploys()

_SPIKE_SOLUTION = r"""python3 - <<'EOF'
import datetime as dt
import json
from collections import Counter

deploys = []
for line in open("/app/logs/deploys.log"):
    stamp, kind, *fields = line.split()
    info = dict(f.split("=", 1) for f in fields)
    if info["service"] == "api":
        deploys.append((dt.datetime.fromisoformat(stamp).timestamp() * 1000, info["version"], info["commit"]))
deploys.sort()
requests = [json.loads(line) for line in open("/app/logs/api_access.jsonl") if line.strip()]
for index, (start, version, commit) in enumerate(deploys):
    end = deploys[index + 1][0] if index + 1 < len(deploys) else float("inf")
    window = [r for r in requests if start <= r["ts_ms"] < end and r["path"] != "/healthz"]
    errors = [r for r in window if r["status"] >= 500]
    rate = len(errors) / len(window)
    if rate > 0.05:
        top = Counter(r["path"] for r in errors).most_common(1)[0][0]
        result = {"version": version, "commit": commit, "error_rate": round(rate, 4), "top_error_path": top}
        json.dump(result, open("/app/spike.json", "w"))
        print(result)
        break
EOF
"""

_SPIKE_TESTS = f'''
TRUTH = {_spike_truth!r}


def _spike():
    data = json.loads(Path("/app/spike.json").read_text())
    assert isinstance(data, dict)
    return data


def test_culprit_version():
    assert _spike().get("version") == TRUTH["version"]


def test_culprit_commit():
    assert _spike().get("commit") == TRUTH["commit"]


def test_error_rate():
    rate = _spike().get("error_rate")
    assert isinstance(rate, (int, float)) and abs(rate - TRUTH["error_rate"]) < 0.0006


def test_top_error_path():
    assert _spike().get("top_error_path") == TRUTH["top_error_path"]


def test_logs_unchanged():
    assert unchanged("/app/logs/deploys.log") and unchanged("/app/logs/api_access.jsonl")
'''

_SPIKE = Spec(
    task_id="logs-deploy-error-spike",
    title="Find the deploy that started the error spike",
    difficulty="medium",
    category="log-forensics",
    limits={"agent_timeout_s": 900},
    instruction="""
The api's 5xx errors jumped on 10 June 2024. /app/logs/deploys.log lists the deploys and rollbacks of all our
services (local time with its UTC offset), and /app/logs/api_access.jsonl is the api's access log (one JSON
object per request, `ts_ms` in Unix milliseconds).

A deploy's window runs from that api deploy (or rollback) up to the next one of the api (the last one to the end of
the log). Its error rate is the share of responses with status 500-599 among the requests in the window, leaving
out the load balancer's health checks (`/healthz`). Find the first api deploy whose error rate is above 5%, and
write /app/spike.json:

```json
{"version": "...", "commit": "...", "error_rate": 0.0123, "top_error_path": "/v1/..."}
```

`error_rate` as a fraction rounded to 4 decimals; `top_error_path` is the path with the most 5xx responses in that
window. Do not modify the logs.
""",
    files={"logs/deploys.log": _deploy_log, "logs/api_access.jsonl": _api_access},
    tests=_SPIKE_TESTS,
    weights={"test_culprit_version": 2.0, "test_culprit_commit": 1.0, "test_error_rate": 1.5,
             "test_top_error_path": 1.5},
    guards=["test_logs_unchanged"],
    solution=_SPIKE_SOLUTION,
    held_out=True,
    tags=["logs", "deploys", "incident", "json"],
)


# --------------------------------------------------------------------------------------------------------------
# 4. logs-session-reconstruct (held out): one user session rebuilt from a gateway log and two services' logs.

def _session_logs():
    rng = random.Random(777)
    target = "sess-4f1c9a"
    start = dt.datetime(2024, 7, 1, 9, 58, 0, tzinfo=UTC)
    sessions = [target, "sess-77b210", "sess-0a9e33", "sess-c3d801"]
    flows = {
        "browse": [("GET", "/catalog", ["catalog"]), ("GET", "/catalog/item/311", ["catalog"])],
        "cart": [("POST", "/cart/items", ["cart"]), ("GET", "/cart", ["cart", "catalog"])],
        "checkout": [("POST", "/checkout", ["cart", "payments"])],
    }
    gateway, cart, catalog, payments = [], [], [], []
    truth_requests = []
    root = None
    at = start
    order = [(s, f) for s in sessions for f in ("browse", "cart", "checkout", "browse")]
    rng.shuffle(order)
    # the target session's flows keep their order, the others interleave
    target_flows = iter(["browse", "cart", "checkout", "browse"])
    plan = []
    for s, f in order:
        plan.append((s, next(target_flows) if s == target else f))
    for session, flow in plan:
        for method, path, services in flows[flow]:
            at += dt.timedelta(milliseconds=rng.randrange(400, 9000))
            rid = f"r-{rng.getrandbits(32):08x}"
            t = at
            calls = []
            failed = False
            message = None
            for service in services:
                t += dt.timedelta(milliseconds=rng.randrange(3, 40))
                crid = f"{rid}.{service[:3]}"
                status = 200
                if session == target and service == "payments":
                    # the payment call fans out to a fraud check that times out
                    child = f"{crid}.risk"
                    ct = t + dt.timedelta(milliseconds=12)
                    payments.append((ct, child, crid, "risk", 504, "risk engine timed out after 3000 ms"))
                    status, failed, message = 502, True, "risk engine timed out after 3000 ms"
                    root = {"failed_request": rid, "service": "risk", "message": message}
                    calls.append((ct, "risk"))
                elif service == "payments":
                    ct = t + dt.timedelta(milliseconds=9)
                    payments.append((ct, f"{crid}.risk", crid, "risk", 200, "score 0.12"))
                    calls.append((ct, "risk"))
                record = (t, crid, rid, service, status)
                {"cart": cart, "catalog": catalog, "payments": payments}[service].append(record + ("ok" if status == 200 else "upstream failure",))
                calls.append((t, service))
            status = 502 if failed else (201 if method == "POST" else 200)
            gateway.append((at, rid, session, method, path, status))
            if session == target:
                stamp = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
                truth_requests.append({"rid": rid, "time": stamp, "method": method, "path": path, "status": status,
                                       "services": [s for _, s in sorted(calls)]})
    cest = dt.timezone(dt.timedelta(hours=2))
    gw = "\n".join(f"{a.astimezone(cest).isoformat(timespec='milliseconds')} gateway rid={r} session={s} \"{m} {p}\" {st}"
                   for a, r, s, m, p, st in sorted(gateway)) + "\n"
    cart_log = "\n".join(f"{int(t.timestamp() * 1000)} cart rid={r} parent={p} status={st} msg=\"{msg}\""
                         for t, r, p, _, st, msg in sorted(cart)) + "\n"
    catalog_log = "\n".join(f"{int(t.timestamp() * 1000)} catalog rid={r} parent={p} status={st} msg=\"{msg}\""
                            for t, r, p, _, st, msg in sorted(catalog)) + "\n"
    pay_log = "\n".join(f"{t.strftime('%d/%b/%Y %H:%M:%S')}.{t.microsecond // 1000:03d} UTC [{svc}] request={r} caused_by={p} "
                        f"code={st} {msg}" for t, r, p, svc, st, msg in sorted(payments)) + "\n"
    return {"logs/gateway.log": gw, "logs/cart.log": cart_log, "logs/catalog.log": catalog_log,
            "logs/payments.log": pay_log}, truth_requests, root


_sess_files, _sess_truth, _sess_root = _session_logs()

_SESSION_SOLUTION = r"""python3 - <<'EOF'
import datetime as dt
import json
import re
from collections import defaultdict

UTC = dt.timezone.utc
calls = defaultdict(list)  # gateway rid -> [(time, service, rid, status, message)]
parent = {}
records = []
for name in ("cart", "catalog"):
    for line in open(f"/app/logs/{name}.log"):
        m = re.match(r'(\d+) (\w+) rid=(\S+) parent=(\S+) status=(\d+) msg="(.*)"', line)
        records.append((int(m[1]) / 1000, m[2], m[3], m[4], int(m[5]), m[6]))
for line in open("/app/logs/payments.log"):
    m = re.match(r"(\S+ \S+) UTC \[(\w+)\] request=(\S+) caused_by=(\S+) code=(\d+) (.*)", line)
    at = dt.datetime.strptime(m[1], "%d/%b/%Y %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
    service = "payments" if m[2] == "payments" else m[2]
    records.append((at, service, m[3], m[4], int(m[5]), m[6]))
for at, service, rid, par, status, msg in records:
    parent[rid] = par
def root_of(rid):
    while rid in parent:
        rid = parent[rid]
    return rid
for at, service, rid, par, status, msg in records:
    calls[root_of(rid)].append((at, service, rid, status, msg))
out = []
for line in open("/app/logs/gateway.log"):
    m = re.match(r'(\S+) gateway rid=(\S+) session=(\S+) "(\S+) (\S+)" (\d+)', line)
    if m[3] != "sess-4f1c9a":
        continue
    at = dt.datetime.fromisoformat(m[1]).astimezone(UTC)
    stamp = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
    out.append((at, {"rid": m[2], "time": stamp, "method": m[4], "path": m[5], "status": int(m[6]),
                     "services": [c[1] for c in sorted(calls[m[2]])]}))
out.sort(key=lambda item: item[0])
with open("/app/session.jsonl", "w") as handle:
    for _, item in out:
        handle.write(json.dumps(item) + "\n")
failed = next(item for _, item in out if item["status"] >= 500)
deepest = [c for c in calls[failed["rid"]] if c[3] >= 500]
depth = lambda rid: rid.count(".")
cause = max(deepest, key=lambda c: depth(c[2]))
json.dump({"failed_request": failed["rid"], "service": cause[1], "message": cause[4]}, open("/app/root_cause.json", "w"))
EOF
cat /app/session.jsonl /app/root_cause.json
"""

_SESSION_TESTS = f'''
TRUTH = {_sess_truth!r}
ROOT = {_sess_root!r}


def _session():
    return [json.loads(line) for line in Path("/app/session.jsonl").read_text().splitlines() if line.strip()]


def test_session_requests():
    got = _session()
    assert sorted(r.get("rid") for r in got) == sorted(r["rid"] for r in TRUTH)


def test_order_and_utc_times():
    got = _session()
    assert [(r.get("rid"), r.get("time")) for r in got] == [(r["rid"], r["time"]) for r in TRUTH]


def test_request_lines_and_status():
    got = _session()
    assert [(r.get("method"), r.get("path"), r.get("status")) for r in got] == [(r["method"], r["path"], r["status"]) for r in TRUTH]


def test_services_per_request():
    got = _session()
    assert len(got) == len(TRUTH)
    assert [r.get("services") for r in got] == [r["services"] for r in TRUTH]


def test_root_cause():
    data = json.loads(Path("/app/root_cause.json").read_text())
    assert data == ROOT


def test_logs_unchanged():
    assert all(unchanged(path) for path in ORIGINAL_SHA256)
'''

_SESSION = Spec(
    task_id="logs-session-reconstruct",
    title="Rebuild a user's session from request ids across four logs",
    difficulty="medium",
    category="log-forensics",
    limits={"agent_timeout_s": 1200},
    instruction="""
A customer's checkout failed; their session id is `sess-4f1c9a`. Rebuild the session from the logs in /app/logs/:

- `gateway.log`: one line per request reaching our gateway, local time with its offset, the request id (`rid`),
  the session, the request line and the status returned;
- `cart.log`, `catalog.log`: the two services, time in Unix milliseconds; each call has its own `rid` and the
  `parent` id of the request that caused it;
- `payments.log`: the payments service and the risk engine it calls (`[payments]`, `[risk]`), time in UTC; each
  call's `request` id and `caused_by` (its parent's id). Calls nest: a risk call is caused by a payments call,
  which is caused by a gateway request.

Write /app/session.jsonl, one JSON object per gateway request of that session, oldest first:
`{"rid": "...", "time": "2024-07-01T09:58:03.120Z", "method": "GET", "path": "/...", "status": 200,
"services": ["cart", "catalog"]}` where `time` is the gateway's time in UTC with milliseconds and `services`
lists the service of every call the request caused, directly or not, ordered by the call's time.

Then write /app/root_cause.json, `{"failed_request": "<gateway rid>", "service": "...", "message": "..."}`: for the
session's first request that failed (status 500 or more), the deepest failing call it caused: its service and the
message it logged (the text after its status code). Do not modify the logs.
""",
    files=_sess_files,
    tests=_SESSION_TESTS,
    weights={"test_session_requests": 1.0, "test_order_and_utc_times": 1.5, "test_request_lines_and_status": 1.0,
             "test_services_per_request": 1.5, "test_root_cause": 2.0},
    guards=["test_logs_unchanged"],
    solution=_SESSION_SOLUTION,
    tags=["logs", "tracing", "request-id", "timezones"],
)


# --------------------------------------------------------------------------------------------------------------
# 5. logs-clock-skew-zip: per-host logs in a zip archive; one web host's clock is off. Pair its lines with the load
#    balancer's by request id, measure the offset, and merge everything on corrected time.

def _skew_logs():
    rng = random.Random(5150)
    start = dt.datetime(2024, 8, 19, 14, 0, 0, tzinfo=UTC)
    hosts = ["web1", "web2", "web3"]
    skewed, offset = "web3", 37

    def stamp(moment):
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"

    entries = []  # (true time, file, text after the time)
    at = start
    for _ in range(150):
        at += dt.timedelta(milliseconds=rng.randrange(200, 4000))
        rid = f"{rng.getrandbits(32):08x}"
        host = rng.choice(hosts)
        path = rng.choice(["/", "/api/items", "/api/cart", "/login", "/static/app.js"])
        status = rng.choice([200, 200, 200, 304, 404, 500])
        entries.append((at, "lb.log", f"lb rid={rid} -> {host} GET {path}"))
        arrive = at + dt.timedelta(milliseconds=rng.randrange(1, 30))
        entries.append((arrive, f"{host}.log", f"{host} rid={rid} GET {path} {status}"))
        if rng.random() < 0.1:
            other = rng.choice(hosts)
            entries.append((arrive + dt.timedelta(milliseconds=rng.randrange(1, 900)), f"{other}.log", f"{other} cron: flushed cache"))
    per_file: dict[str, list] = {"lb.log": [], "web1.log": [], "web2.log": [], "web3.log": []}
    for moment, name, text in entries:
        shown = moment + dt.timedelta(seconds=offset) if name == f"{skewed}.log" else moment
        per_file[name].append((moment, f"{stamp(shown)} {text}", text))
    merged = []
    for name in sorted(per_file):
        per_file[name].sort()
        for index, (moment, _, text) in enumerate(per_file[name]):
            merged.append(((moment, name, index), f"{stamp(moment)} {text}"))
    merged.sort()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(per_file):
            info = zipfile.ZipInfo(f"incident-2024-08-19/{name}", date_time=(2024, 8, 19, 16, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, "\n".join(line for _, line, _ in per_file[name]) + "\n")
    return buffer.getvalue(), {"host": skewed, "offset_s": offset}, [line for _, line in merged]


_skew_zip, _skew_truth, _skew_merged = _skew_logs()

_SKEW_SOLUTION = r"""python3 - <<'EOF'
import datetime as dt
import json
import re
import statistics
import zipfile

archive = zipfile.ZipFile("/app/incident.zip")
logs = {}
for name in archive.namelist():
    if name.endswith(".log"):
        logs[name.rsplit("/", 1)[-1]] = archive.read(name).decode().splitlines()


def when(line):
    return dt.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)


sent = {}
for line in logs["lb.log"]:
    m = re.search(r"rid=(\S+) -> (\S+)", line)
    sent[m[1]] = when(line)
offsets = {}
for name, lines in logs.items():
    if name == "lb.log":
        continue
    diffs = [(when(l) - sent[m[1]]).total_seconds() for l in lines if (m := re.search(r" rid=(\S+)", l))]
    offsets[name[:-4]] = round(statistics.median(diffs))
host = max(offsets, key=lambda h: abs(offsets[h]))
json.dump({"host": host, "offset_s": offsets[host]}, open("/app/skew.json", "w"))
entries = []
for name in sorted(logs):
    for index, line in enumerate(logs[name]):
        moment = when(line)
        if name == f"{host}.log":
            moment -= dt.timedelta(seconds=offsets[host])
        text = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z" + line[24:]
        entries.append(((moment, name, index), text))
entries.sort()
with open("/app/merged.log", "w") as out:
    out.writelines(text + "\n" for _, text in entries)
print(offsets)
EOF
"""

_SKEW_TESTS = f'''
MERGED = {_skew_merged!r}
TRUTH = {_skew_truth!r}


def _skew():
    data = json.loads(Path("/app/skew.json").read_text())
    assert isinstance(data, dict)
    return data


def _merged():
    return [line for line in Path("/app/merged.log").read_text().splitlines() if line.strip()]


def test_skewed_host():
    assert _skew().get("host") == TRUTH["host"]


def test_offset_seconds():
    assert _skew().get("offset_s") == TRUTH["offset_s"]


def test_merged_has_every_line_corrected():
    assert sorted(_merged()) == sorted(MERGED)


def test_merged_in_corrected_order():
    assert _merged() == MERGED


def test_archive_unchanged():
    assert unchanged("/app/incident.zip")
'''

_SKEW = Spec(
    task_id="logs-clock-skew-zip",
    title="Find the host with a skewed clock and merge its logs on corrected time",
    difficulty="medium",
    category="log-forensics",
    limits={"agent_timeout_s": 900},
    instruction="""
/app/incident.zip holds the logs of one incident: the load balancer's `lb.log` and the logs of the web hosts
behind it (`web1.log`, ...). Every line starts with a UTC timestamp with milliseconds. The load balancer logs each
request it forwards (`rid=... -> HOST ...`) and the host logs the same request id when the request arrives, a few
milliseconds later. One web host's clock is off.

1. Find that host and its offset: the median, over its requests, of (the host's time minus the load balancer's
   time for the same request id), rounded to whole seconds. Write /app/skew.json as
   `{"host": "web1", "offset_s": -12}`.
2. Write /app/merged.log: every line of every log in the archive, with that host's timestamps corrected (its
   offset subtracted; the rest of each line unchanged), sorted by time. Lines with the same time go in file-name
   order (`lb.log`, `web1.log`, ...), then in their order in the file.

Leave /app/incident.zip as it is.
""",
    files={"incident.zip": _skew_zip},
    tests=_SKEW_TESTS,
    weights={"test_skewed_host": 1.5, "test_offset_seconds": 1.5, "test_merged_has_every_line_corrected": 1.5,
             "test_merged_in_corrected_order": 1.5},
    guards=["test_archive_unchanged"],
    solution=_SKEW_SOLUTION,
    held_out=True,
    tags=["logs", "zip", "clock-skew", "correlation", "binary-fixture"],
)

TASKS: list[Spec] = [_ATTACK, _ROTATED, _SPIKE, _SESSION, _SKEW]
