import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/sched/scheduler.py': 'a13b2837f929b8280acef23d3c8d36291f41430a112c0c8fdfb03f007398e509'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


SCHED = "/app/sched/scheduler.py"


def _run(tmp_path, jobs, *times):
    jobs_file = tmp_path / "jobs"
    out = tmp_path / "ran.txt"
    lines = [f"{name} {spec} echo $SCHED_JOB $SCHED_TIME >> {out}" for name, spec in jobs]
    jobs_file.write_text("# test jobs\n\n" + "\n".join(lines) + "\n")
    for when in times:
        result = run("python3", SCHED, "--jobs", str(jobs_file), "--state", str(tmp_path / "state"), "--once",
                     "--now", when, timeout=30)
        assert result.returncode == 0, result.stderr
    return out.read_text().splitlines() if out.exists() else []


def _names(lines, when):
    return sorted(line.split()[0] for line in lines if line.split()[1] == when)


def test_steps_and_lists(tmp_path):
    jobs = [("every15", "*/15 * * * *"), ("pair", "5,35 * * * *"), ("odd_days", "0 12 */2 * *"),
            ("list_step", "0 1,13 * * *"), ("plain", "30 9 * * *")]
    times = ["2026-03-02T12:00", "2026-03-03T12:00", "2026-03-03T13:00", "2026-03-03T09:30", "2026-03-03T10:35",
             "2026-03-05T01:00"]
    lines = _run(tmp_path, jobs, *times)
    assert _names(lines, "2026-03-02T12:00") == ["every15"]
    assert _names(lines, "2026-03-03T12:00") == ["every15", "odd_days"]
    assert _names(lines, "2026-03-03T13:00") == ["every15", "list_step"]
    assert _names(lines, "2026-03-03T09:30") == ["every15", "plain"]
    assert _names(lines, "2026-03-03T10:35") == ["pair"]
    assert _names(lines, "2026-03-05T01:00") == ["every15", "list_step"]


def test_ranges_and_weekdays(tmp_path):
    jobs = [("workdays", "0 8 * * 1-5"), ("sunday7", "0 8 * * 7"), ("sunday0", "0 8 * * 0"),
            ("office", "*/30 9-17/4 * * *"), ("summer", "0 8 * 6-8 *")]
    times = ["2026-03-01T08:00", "2026-03-02T08:00", "2026-03-07T08:00", "2026-03-02T13:30", "2026-03-02T11:00",
             "2026-07-05T08:00"]
    lines = _run(tmp_path, jobs, *times)
    assert _names(lines, "2026-03-01T08:00") == ["sunday0", "sunday7"]
    assert _names(lines, "2026-03-02T08:00") == ["workdays"]
    assert _names(lines, "2026-03-07T08:00") == []
    assert _names(lines, "2026-03-02T13:30") == ["office"]
    assert _names(lines, "2026-03-02T11:00") == []
    assert _names(lines, "2026-07-05T08:00") == ["summer", "sunday0", "sunday7"]


def test_day_of_month_or_weekday(tmp_path):
    jobs = [("either", "0 0 1,15 * 5"), ("dom_only", "0 0 13 * *")]
    lines = _run(tmp_path, jobs, "2026-03-13T00:00", "2026-03-15T00:00", "2026-03-14T00:00", "2026-03-20T00:00")
    assert _names(lines, "2026-03-13T00:00") == ["dom_only", "either"]
    assert _names(lines, "2026-03-15T00:00") == ["either"]
    assert _names(lines, "2026-03-14T00:00") == []
    assert _names(lines, "2026-03-20T00:00") == ["either"]


def test_a_minute_runs_once(tmp_path):
    jobs = [("tick", "*/5 * * * *"), ("hourly", "0 * * * *")]
    lines = _run(tmp_path, jobs, "2026-03-02T10:00", "2026-03-02T10:00", "2026-03-02T10:05", "2026-03-02T10:00",
                 "2026-03-02T10:05", "2026-03-02T11:00")
    assert lines == ["tick 2026-03-02T10:00", "hourly 2026-03-02T10:00", "tick 2026-03-02T10:05",
                     "tick 2026-03-02T11:00", "hourly 2026-03-02T11:00"]


def test_rejects_bad_fields(tmp_path):
    jobs_file = tmp_path / "jobs"
    for spec in ("61 * * * *", "* 24 * * *", "* * 0 * *", "*/0 * * * *", "5-2 * * * *", "* * * 13 *", "* * * * 8"):
        jobs_file.write_text(f"bad {spec} echo no >> {tmp_path}/bad.txt\n")
        result = run("python3", SCHED, "--jobs", str(jobs_file), "--state", str(tmp_path / "state"), "--once",
                     "--now", "2026-03-02T10:00")
        assert result.returncode != 0 and "bad" in result.stderr, spec
    assert not (tmp_path / "bad.txt").exists()
    jobs_file.write_text(f"good 0 10 * * * echo yes >> {tmp_path}/good.txt\n")
    result = run("python3", SCHED, "--jobs", str(jobs_file), "--state", str(tmp_path / "state2"), "--once",
                 "--now", "2026-03-02T10:00")
    assert result.returncode == 0 and (tmp_path / "good.txt").read_text() == "yes\n"
