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


def field_matches(spec, value, kind):
    if spec == "*":
        return True
    if spec.startswith("*/"):
        return value % int(spec[2:]) == 0
    return int(spec) == value


def due(job, when):
    minute, hour, dom, month, dow = job["fields"]
    return (field_matches(minute, when.minute, "minute") and field_matches(hour, when.hour, "hour")
            and field_matches(dom, when.day, "dom") and field_matches(month, when.month, "month")
            and field_matches(dow, when.weekday(), "dow"))


def read_jobs(path):
    jobs = []
    for line in open(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 6)
        jobs.append({"name": parts[0], "fields": parts[1:6], "command": parts[6].strip()})
    return jobs


def run_minute(jobs, when, state):
    stamp = when.strftime("%Y-%m-%dT%H:%M")
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
