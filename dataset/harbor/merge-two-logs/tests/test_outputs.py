import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/db.log': '84ba5c99524bf26ceafa3f88c4479d7b2cca282f6fd6f24581461add594aa7c2', '/app/logs/web.log': '32eac2095d0b984930b9f7de9df64a57ee8d405d65db46ed59fe7b4436349b03'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['2026-04-03T00:27:32Z db 21', '2026-04-03T01:00:50Z web 9', '2026-04-03T01:16:46Z db 12', '2026-04-03T01:34:15Z web 4', '2026-04-03T01:46:01Z db 6', '2026-04-03T01:55:30Z db 18', '2026-04-03T02:01:23Z db 20', '2026-04-03T02:16:53Z web 5', '2026-04-03T02:22:00Z web 11', '2026-04-03T02:27:40Z web 8', '2026-04-03T02:51:04Z db 5', '2026-04-03T03:21:36Z db 9', '2026-04-03T04:20:27Z web 3', '2026-04-03T05:14:34Z db 0', '2026-04-03T05:37:51Z web 19', '2026-04-03T06:10:28Z web 7', '2026-04-03T06:43:01Z web 6', '2026-04-03T07:14:51Z db 1', '2026-04-03T07:20:26Z db 11', '2026-04-03T07:53:44Z web 1', '2026-04-03T08:21:38Z web 15', '2026-04-03T08:58:03Z web 2', '2026-04-03T09:12:49Z web 17', '2026-04-03T09:17:51Z web 13', '2026-04-03T09:50:26Z web 23', '2026-04-03T11:24:52Z web 10', '2026-04-03T12:52:46Z db 10', '2026-04-03T13:15:23Z db 19', '2026-04-03T14:32:44Z web 16', '2026-04-03T16:06:19Z db 24', '2026-04-03T17:44:53Z web 18', '2026-04-03T17:46:56Z db 23', '2026-04-03T17:49:38Z web 12', '2026-04-03T18:05:13Z web 20', '2026-04-03T18:40:28Z db 16', '2026-04-03T19:24:09Z db 7', '2026-04-03T19:31:25Z web 21', '2026-04-03T19:46:19Z db 13', '2026-04-03T20:05:36Z db 3', '2026-04-03T20:18:36Z db 4', '2026-04-03T20:38:55Z db 22', '2026-04-03T20:59:46Z db 14', '2026-04-03T21:19:39Z web 14', '2026-04-03T21:22:54Z web 22', '2026-04-03T21:37:37Z web 24', '2026-04-03T22:20:15Z web 0', '2026-04-03T22:26:28Z db 17', '2026-04-03T22:57:34Z db 8', '2026-04-03T23:01:33Z db 15', '2026-04-03T23:07:07Z db 2']


def _got():
    return Path("/app/logs/all.log").read_text().splitlines()


def test_all_lines_present():
    assert sorted(_got()) == sorted(EXPECTED)


def test_sorted_by_time():
    got = _got()
    assert got and set(got) <= set(EXPECTED), "lines that are in neither input"
    assert set(l.split()[1] for l in got) == set(["web", "db"]), "lines of both inputs"
    assert [l[:20] for l in got] == sorted(l[:20] for l in got)


def test_exact_merge():
    assert _got() == EXPECTED


def test_inputs_unchanged():
    assert unchanged("/app/logs/web.log") and unchanged("/app/logs/db.log")
