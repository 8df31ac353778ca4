import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/README.md': 'fbe95bd8a2a9adb9e5c602ea5697f34480c8165e0ea11b680eacdc602a747591', '/app/examples/nightly.json': 'aab74b2513b12ffd927039ae02d43cb22bd984f755d78009b815aa67dac0219f', '/app/flowrun/__init__.py': '8fccb1b8c7e41700a9e5ce5bebbcb94d69546254a5897cbb72856663b62165fd', '/app/flowrun/__main__.py': '13a1a5b340cdcfc1902b62be90e508c7c71886000d5bf087e7854aadf09fb35e', '/app/flowrun/backoff.py': '3938c5fe1222d554451fba1b0471655d01e7d5343cf32f94d6095520f4b36fcd', '/app/flowrun/cli.py': '6b48f7474f42341a8c1890d79b82395ec12a5a74c6e6d355ae1a6e253bae1835', '/app/flowrun/clock.py': '1741076885abe0d11d6c8930bc3842cf184788f7d495b75f83c1ac61543192b1', '/app/flowrun/dag.py': '26462983784f266458b4e416c2e7251d75c3d7fca15954dfac64ddd23523e1dc', '/app/flowrun/errors.py': 'b9bf57e9382143ecc86c18268ca604e4c40a6fc178f65259c112afc51cb25d58', '/app/flowrun/executor.py': 'bfe1dc6ac89d963c1349f42f05f26ec632b520ab48931ee29b68eadfc2bf84ca', '/app/flowrun/lock.py': '29b6aa3f90203beae20812429c314b1f80c237f1314a70411b136c6e8ab1431b', '/app/flowrun/report.py': 'f0d4815d5316cf8d28cf314427f3fd0c341ce34bcc43868bc486ed5d2acf8991', '/app/flowrun/scheduler.py': 'd00e847df52550e748437acca0ceb1aaf4e38501462514322bac944a917ced31', '/app/flowrun/spec.py': 'a0154b10b127de9a50a16fae21cf1eeb99ca0cce15885599368bc98c8ccb5c29', '/app/flowrun/state.py': '9510a6308d68d4d945873924b08b751cfed7701159b52d22be309f1949464f48', '/app/unit_tests/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/unit_tests/test_runs.py': '07968f24ff268ba4043ae3eae3f59ddaebcd6e06a9677965a193b83b4329b6a1', '/app/unit_tests/test_spec_and_dag.py': '2fe05609d57c0bb65704d0ab7d27b7cc2b593e8e1313c41e68da6b21cb6ae77a'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


# Hidden tests of workflow-runner-resume (the corpus prelude defines run, unchanged, Path, json, time, ...).
import sqlite3
import tempfile

APP = "/app"


def project(jobs, defaults=None, name="wf"):
    """A fresh folder with a workflow file; returns (folder, workflow path, database path)."""
    folder = Path(tempfile.mkdtemp(prefix="flow-"))
    data = {"name": name, "jobs": jobs}
    if defaults:
        data["defaults"] = defaults
    (folder / "wf.json").write_text(json.dumps(data))
    return folder, folder / "wf.json", folder / "state" / "db.sqlite"


def flow(db, *args, timeout=120):
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    return run("python3", "-m", "flowrun", "--db", str(db), *args, cwd=APP, timeout=timeout)


def trace(folder):
    path = Path(folder, "trace")
    return path.read_text().split() if path.exists() else []


def status(db, run_id):
    proc = flow(db, "status", str(run_id), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def attempts(data, job):
    return [(a["attempt"], a["exit_code"], a["delay_before"]) for a in data["jobs"][job]["attempts"]]


def echo(name, deps=(), **extra):
    return {"command": f"echo {name} >> trace", "deps": list(deps), **extra}


def test_cycles_anywhere_are_refused():
    folder, wf, db = project({"start": echo("start"), "next": echo("next", ["start"]),
                              "b": echo("b", ["d", "start"]), "c": echo("c", ["b"]), "d": echo("d", ["c"])})
    proc = flow(db, "validate", str(wf))
    assert proc.returncode == 2, (proc.returncode, proc.stdout)
    assert "cycle" in proc.stderr.lower() and all(job in proc.stderr for job in "bcd"), proc.stderr
    proc = flow(db, "run", str(wf), "--time-scale", "0")
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert trace(folder) == []

    folder, wf, db = project({"lonely": echo("lonely", ["lonely"]), "fine": echo("fine")})
    proc = flow(db, "validate", str(wf))
    assert proc.returncode == 2 and "lonely" in proc.stderr, (proc.returncode, proc.stderr)
    proc = flow(db, "run", str(wf), "--time-scale", "0")
    assert proc.returncode == 2 and trace(folder) == []

    folder, wf, db = project({"p": echo("p", ["q", "r"]), "q": echo("q", ["s"]), "r": echo("r", ["s"]),
                              "s": echo("s")})
    assert flow(db, "validate", str(wf)).returncode == 0
    proc = flow(db, "run", str(wf), "--time-scale", "0")
    assert proc.returncode == 0 and trace(folder) == ["s", "q", "r", "p"], (proc.stdout, proc.stderr)


FLAKY = ("n=$(cat count.{job} 2>/dev/null || echo 0); n=$((n+1)); echo $n > count.{job}; "
         "echo {job} >> trace; [ $n -ge {succeed_at} ]")


def flaky(job, succeed_at, deps=(), **extra):
    return {"command": FLAKY.format(job=job, succeed_at=succeed_at), "deps": list(deps), **extra}


def test_retries_and_backoff_delays():
    folder, wf, db = project({
        "flaky": flaky("flaky", 3, retries=3, backoff={"base": 0.5, "factor": 3, "max": 1.0}),
        "always": flaky("always", 99, retries=2, backoff={"base": 0.25, "factor": 2, "max": 10}),
        "after": echo("after", ["always"]),
    })
    proc = flow(db, "run", str(wf), "--time-scale", "0")
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    data = status(db, 1)
    assert attempts(data, "flaky") == [(1, 1, 0.0), (2, 1, 0.5), (3, 0, 1.0)]
    assert attempts(data, "always") == [(1, 1, 0.0), (2, 1, 0.25), (3, 1, 0.5)]
    assert data["jobs"]["after"]["status"] == "skipped" and data["jobs"]["flaky"]["status"] == "succeeded"
    assert trace(folder).count("always") == 3 and "after" not in trace(folder)

    folder, wf, db = project({"once": flaky("once", 99)}, defaults={"retries": 0})
    assert flow(db, "run", str(wf), "--time-scale", "0").returncode == 1
    assert attempts(status(db, 1), "once") == [(1, 1, 0.0)]


def test_backoff_really_waits():
    folder, wf, db = project({"slowfail": flaky("slowfail", 99, retries=2,
                                                backoff={"base": 0.4, "factor": 2, "max": 5})})
    started = time.monotonic()
    proc = flow(db, "run", str(wf))
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    assert trace(folder).count("slowfail") == 3
    assert 1.2 <= elapsed < 30, elapsed


KILLER = ("if [ ! -e killed ]; then touch killed; kill -9 $FLOWRUN_PID; sleep 2; exit 1; fi; "
          "echo index >> trace")


def test_resume_after_the_runner_was_killed():
    folder, wf, db = project({
        "extract": echo("extract"), "clean": echo("clean", ["extract"]),
        "index": {"command": KILLER, "deps": ["extract"], "retries": 1},
        "load": echo("load", ["clean", "index"]), "report": echo("report", ["load"]),
    })
    proc = flow(db, "run", str(wf), "--time-scale", "0")
    assert proc.returncode in (-9, 137), (proc.returncode, proc.stdout, proc.stderr)
    time.sleep(0.2)
    data = status(db, 1)
    assert data["status"] == "running"
    assert {job: info["status"] for job, info in data["jobs"].items()} == {
        "extract": "succeeded", "clean": "succeeded", "index": "running", "load": "pending", "report": "pending"}
    assert trace(folder) == ["extract", "clean"]
    proc = flow(db, "resume", "1", "--time-scale", "0")
    assert proc.returncode == 0 and "run 1 succeeded" in proc.stdout, (proc.returncode, proc.stdout, proc.stderr)
    time.sleep(2.2)  # the killed attempt's shell exits on its own
    assert trace(folder) == ["extract", "clean", "index", "load", "report"]
    data = status(db, 1)
    assert data["status"] == "succeeded" and data["resumes"] == 1
    assert [(a, c) for a, c, _ in attempts(data, "index")] == [(1, None), (2, 0)]
    assert [a for a, _, _ in attempts(data, "extract")] == [1]


def test_resume_after_a_failure():
    folder, wf, db = project({
        "fetch": {"command": "test -e ready && echo fetch >> trace"},
        "parse": echo("parse", ["fetch"]), "other": echo("other"),
        "publish": echo("publish", ["parse", "other"]),
    })
    proc = flow(db, "run", str(wf), "--time-scale", "0")
    assert proc.returncode == 1
    assert trace(folder) == ["other"]
    (folder / "ready").write_text("")
    proc = flow(db, "resume", "1", "--time-scale", "0")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert trace(folder) == ["other", "fetch", "parse", "publish"]
    data = status(db, 1)
    assert data["status"] == "succeeded"
    assert [(a, c) for a, c, _ in attempts(data, "fetch")] == [(1, 1), (2, 0)]
    proc = flow(db, "resume", "1", "--time-scale", "0")
    assert proc.returncode == 2 and "already succeeded" in proc.stderr
    assert trace(folder) == ["other", "fetch", "parse", "publish"]


def test_resumed_job_gets_a_fresh_retry_budget():
    folder, wf, db = project({"shaky": flaky("shaky", 4, retries=1, backoff={"base": 0.3, "factor": 2, "max": 9})})
    assert flow(db, "run", str(wf), "--time-scale", "0").returncode == 1
    assert attempts(status(db, 1), "shaky") == [(1, 1, 0.0), (2, 1, 0.3)]
    proc = flow(db, "resume", "1", "--time-scale", "0")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    data = status(db, 1)
    assert attempts(data, "shaky") == [(1, 1, 0.0), (2, 1, 0.3), (3, 1, 0.0), (4, 0, 0.3)]
    assert data["status"] == "succeeded"


def test_guard_shipped_files_unchanged_and_unit_tests_pass():
    for path in ORIGINAL_SHA256:
        if path.startswith(("/app/unit_tests/", "/app/examples/")) or path.endswith(".md"):
            assert unchanged(path), path
    proc = run("python3", "-m", "unittest", "discover", "-s", "unit_tests", "-t", ".", cwd=APP, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Ran 15 tests" in proc.stderr


def test_guard_state_lives_in_sqlite():
    folder, wf, db = project({"a": echo("a"), "b": echo("b", ["a"])})
    assert flow(db, "run", str(wf), "--time-scale", "0").returncode == 0
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"runs", "jobs", "attempts"} <= tables
        assert conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 2
    for module in ("dag", "backoff", "scheduler", "state", "executor", "spec", "cli"):
        assert Path(APP, "flowrun", module + ".py").is_file(), module
