#!/bin/bash
cat > /app/sched/scheduler.py <<'EOF'
"""A small cron: run the jobs of a jobs file that are due at a minute.

    python3 scheduler.py --jobs JOBS --state STATE_DIR [--once --now YYYY-MM-DDTHH:MM]

JOBS: one job per line, `NAME MINUTE HOUR DAY_OF_MONTH MONTH DAY_OF_WEEK COMMAND...`; blank lines and lines
starting with # are ignored. Without --once it runs forever, once per minute of the wall clock.
Each due job runs as `sh -c COMMAND` with SCHED_TIME=YYYY-MM-DDTHH:MM and SCHED_JOB=NAME in its environment.
"""
import argparse
import datetime as dt
import os
import subprocess
import time

LIMITS = {"minute": (0, 59), "hour": (0, 23), "dom": (1, 31), "month": (1, 12), "dow": (0, 6)}


def expand(spec, kind):
    """The set of values a field allows; ValueError naming the job field when it is bad."""
    low, high = LIMITS[kind]
    top = 7 if kind == "dow" else high
    values = set()
    for part in spec.split(","):
        base, _, step = part.partition("/")
        step = int(step) if step else 1
        if step < 1:
            raise ValueError(f"bad step in {spec!r}")
        if base == "*":
            start, end = low, high
        elif "-" in base:
            start, end = (int(x) for x in base.split("-", 1))
        else:
            start = end = int(base)
            if step != 1:
                end = top
        if not (low <= start <= end <= top):
            raise ValueError(f"bad {kind} field {spec!r}")
        values.update(range(start, end + 1, step))
    if kind == "dow" and 7 in values:
        values = (values - {7}) | {0}
    return values


def field_matches(spec, value, kind):
    return value in expand(spec, kind)


def due(job, when):
    minute, hour, dom, month, dow = job["fields"]
    cron_dow = (when.weekday() + 1) % 7
    day_ok = field_matches(dom, when.day, "dom")
    week_ok = field_matches(dow, cron_dow, "dow")
    if dom != "*" and dow != "*":
        day = day_ok or week_ok
    else:
        day = day_ok and week_ok
    return (field_matches(minute, when.minute, "minute") and field_matches(hour, when.hour, "hour")
            and field_matches(month, when.month, "month") and day)


def read_jobs(path):
    jobs = []
    for line in open(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 6)
        job = {"name": parts[0], "fields": parts[1:6], "command": parts[6].strip()}
        for spec, kind in zip(job["fields"], LIMITS):
            try:
                expand(spec, kind)
            except ValueError as error:
                raise SystemExit(f"bad job {job['name']}: {error}")
        jobs.append(job)
    return jobs


def run_minute(jobs, when, state):
    stamp = when.strftime("%Y-%m-%dT%H:%M")
    done = os.path.join(state, "done")
    seen = set(open(done).read().split()) if os.path.exists(done) else set()
    if stamp in seen:
        return
    with open(done, "a") as handle:
        handle.write(stamp + "\n")
    for job in jobs:
        if due(job, when):
            env = dict(os.environ, SCHED_TIME=stamp, SCHED_JOB=job["name"])
            subprocess.run(["sh", "-c", job["command"]], env=env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--once", action="store_true")
    parser.add_argument("--now")
    args = parser.parse_args()
    os.makedirs(args.state, exist_ok=True)
    if args.once:
        when = dt.datetime.strptime(args.now, "%Y-%m-%dT%H:%M") if args.now else dt.datetime.now()
        run_minute(read_jobs(args.jobs), when.replace(second=0, microsecond=0), args.state)
        return
    while True:
        now = dt.datetime.now().replace(second=0, microsecond=0)
        run_minute(read_jobs(args.jobs), now, args.state)
        time.sleep(60 - dt.datetime.now().second)


if __name__ == "__main__":
    main()
EOF
