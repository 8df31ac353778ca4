"""Family ``log-forensics``: answer questions about one event across rotated, partly gzipped logs.

The logs of a service rotate: ``app.log`` (newest), ``app.log.1``, then gzipped ``app.log.2.gz`` ...
(oldest last). An instance asks for a JSON report on one event kind (the key): how often it
happened, when first and last, and on which host most often.

easy: three files (one gzipped); the event is the ``event=`` field.
medium: five files (three gzipped), and near misses: the event's name inside other lines' messages
(``msg="after KEY"``) and longer event names (``KEY_retry``) that must not count.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import random

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    test_module,
)

EVENTS = (
    "login_failed", "disk_full", "oom_kill", "conn_reset", "cert_expired", "rate_limited", "deadlock",
    "segfault", "queue_overflow", "token_expired", "dns_failure", "checksum_mismatch",
)
HOSTS = ("web-1", "web-2", "web-3", "db-1", "db-2", "cache-1", "batch-1")
MESSAGES = ("request served", "job done", "cache warm", "config reloaded", "session closed", "backup ok")


TESTS = SHA256_HELPER + '''
import json


def _report():
    report = json.loads(Path("/app/report.json").read_text())
    assert isinstance(report, dict), "report.json must hold a JSON object"
    assert set(report) >= {"count", "first", "last", "top_host"}, "report.json lacks a field"
    return report


def test_count():
    assert _report()["count"] == EXPECTED["count"]


def test_first_occurrence():
    assert _report()["first"] == EXPECTED["first"]


def test_last_occurrence():
    assert _report()["last"] == EXPECTED["last"]


def test_top_host():
    assert _report()["top_host"] == EXPECTED["top_host"]


def test_guard_logs_unchanged():
    for path, digest in LOG_HASHES.items():
        assert sha256_of(path) == digest, path
'''

SOLUTION = """#!/bin/bash
python3 - <<'EOF'
import collections, glob, gzip, json, re
pattern = re.compile(r"^(\\S+) host=(\\S+) level=\\S+ event=(\\S+) ")
hits = []
for path in glob.glob("/app/logs/app.log*"):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        for line in handle:
            match = pattern.match(line)
            if match and match.group(3) == "{key}":
                hits.append((match.group(1), match.group(2)))
hits.sort()
hosts = collections.Counter(host for _, host in hits)
report = {{"count": len(hits), "first": hits[0][0], "last": hits[-1][0], "top_host": hosts.most_common(1)[0][0]}}
json.dump(report, open("/app/report.json", "w"), indent=2)
EOF
"""


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class LogForensics(TaskFamily):
    name = "log-forensics"
    summary = "Report count, first/last time and top host of one event across rotated, partly gzipped logs."
    keys = EVENTS
    key_meaning = "the event investigated"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        n_files = 5 if medium else 3
        others = [e for e in EVENTS if e != key]
        moment = dt.datetime(2026, rng.randrange(1, 10), rng.randrange(1, 28), tzinfo=dt.timezone.utc)
        favourite = rng.choice(HOSTS)
        while True:
            # oldest file first; every file gets lines, the key event in the oldest and the newest file
            chunks: list[list[str]] = []
            hits: list[tuple[str, str]] = []
            for index in range(n_files):
                lines: list[str] = []
                for _ in range(rng.randrange(30, 70)):
                    moment += dt.timedelta(seconds=rng.randrange(20, 900))
                    host = favourite if rng.random() < 0.35 else rng.choice(HOSTS)
                    stamp = _stamp(moment)
                    roll = rng.random()
                    must = not lines and index in (0, n_files - 1)
                    if must or roll < 0.18:
                        lines.append(f"{stamp} host={host} level=ERROR event={key} msg=\"{rng.choice(MESSAGES)} failed\"")
                        hits.append((stamp, host))
                    elif medium and roll < 0.26:
                        lines.append(f"{stamp} host={host} level=WARN event={rng.choice(others)} msg=\"after {key}\"")
                    elif medium and roll < 0.32:
                        lines.append(f"{stamp} host={host} level=WARN event={key}_retry msg=\"{rng.choice(MESSAGES)}\"")
                    else:
                        event = rng.choice(others) if roll < 0.5 else "info"
                        lines.append(f"{stamp} host={host} level=INFO event={event} msg=\"{rng.choice(MESSAGES)}\"")
                chunks.append(lines)
            per_host: dict[str, int] = {}
            for _, host in hits:
                per_host[host] = per_host.get(host, 0) + 1
            ranked = sorted(per_host.values(), reverse=True)
            if len(ranked) == 1 or ranked[0] > ranked[1]:
                break
        top_host = max(per_host, key=per_host.__getitem__)
        files: dict[str, str | bytes] = {}
        for position, lines in enumerate(reversed(chunks)):  # newest first: app.log, app.log.1, app.log.2.gz ...
            text = "\n".join(lines) + "\n"
            if position == 0:
                files["logs/app.log"] = text
            elif position == 1:
                files["logs/app.log.1"] = text
            else:
                files[f"logs/app.log.{position}.gz"] = gzip.compress(text.encode(), mtime=0)
        expected = {"count": len(hits), "first": hits[0][0], "last": hits[-1][0], "top_host": top_host}
        hashes = {}
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            hashes[f"/app/{name}"] = hashlib.sha256(data).hexdigest()
        fields = (
            '"count" (how many lines record the event), "first" and "last" (the timestamps of the earliest and the '
            'latest such line, exactly as written in the log) and "top_host" (the host that logged it most often)'
        )
        if medium:
            instruction = (
                f"Incident review. The service's logs in /app/logs rotate: app.log is the newest, then app.log.1, then "
                f"the gzipped app.log.2.gz, app.log.3.gz and app.log.4.gz (oldest). Each line reads "
                f"'TIMESTAMP host=HOST level=LEVEL event=EVENT msg=\"...\"'. Investigate the event '{key}': only lines "
                f"whose event field is exactly {key} count (not '{key}_retry', not a mention in a message). Write "
                f"/app/report.json, a JSON object with {fields}. Leave the logs as they are."
            )
        else:
            instruction = (
                f"The logs of a service are in /app/logs: app.log, app.log.1 and the older, gzipped app.log.2.gz. Lines "
                f"look like 'TIMESTAMP host=HOST level=LEVEL event=EVENT msg=\"...\"'. Over all three files, find the "
                f"lines with event={key} and write /app/report.json: a JSON object with {fields}."
            )
        return InstanceParts(
            title=f"Investigate '{key}' across rotated logs",
            instruction=instruction,
            category="log-forensics",
            test_source=test_module({"EXPECTED": expected, "LOG_HASHES": hashes}, TESTS),
            test_weights={
                "test_count": 1.5,
                "test_first_occurrence": 1.0,
                "test_last_occurrence": 1.0,
                "test_top_host": 1.0,
            },
            guards=["test_guard_logs_unchanged"],
            solution=SOLUTION.format(key=key),
            files=files,
            outputs=["/app/report.json"],
            tags=["logs", "gzip", "forensics", "json"],
            parameters={"files": n_files, "hits": len(hits)},
        )
