"""The state database (SQLite): runs, the status of every job of a run, and every attempt of every job.

Everything the runner learns is written here as it happens, so that another process (``flowrun status``) can
follow a run and ``flowrun resume`` can continue one after a failure or a crash.
"""

import sqlite3
from dataclasses import dataclass

from .clock import now_iso
from .errors import UnknownRunError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow TEXT NOT NULL,
    source TEXT NOT NULL,
    workdir TEXT NOT NULL,
    status TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    resumes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS jobs (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    job TEXT NOT NULL,
    position INTEGER NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (run_id, job)
);
CREATE TABLE IF NOT EXISTS attempts (
    run_id INTEGER NOT NULL,
    job TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    delay_before REAL NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    exit_code INTEGER,
    timed_out INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, job, attempt)
);
"""

JOB_STATUSES = ("pending", "running", "succeeded", "failed", "skipped")
RUN_STATUSES = ("running", "succeeded", "failed")


@dataclass(frozen=True)
class RunRecord:
    id: int
    workflow: str
    source: str
    workdir: str
    status: str
    started: str
    finished: str | None
    resumes: int


@dataclass(frozen=True)
class AttemptRecord:
    job: str
    attempt: int
    delay_before: float
    started: str
    finished: str | None
    exit_code: int | None
    timed_out: bool


class StateStore:
    def __init__(self, path):
        self.path = path
        self.conn = sqlite3.connect(path, timeout=30)
        self.conn.executescript(SCHEMA)
        self.conn.commit()

    def close(self):
        self.conn.commit()
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- runs ------------------------------------------------------------------------------------------------
    def create_run(self, workflow, order):
        cursor = self.conn.execute(
            "INSERT INTO runs (workflow, source, workdir, status, started) VALUES (?, ?, ?, 'running', ?)",
            (workflow.name, workflow.source, workflow.workdir, now_iso()))
        run_id = cursor.lastrowid
        self.conn.executemany("INSERT INTO jobs (run_id, job, position, status) VALUES (?, ?, ?, 'pending')",
                              [(run_id, job, position) for position, job in enumerate(order)])
        self.conn.commit()
        return run_id

    def get_run(self, run_id):
        row = self.conn.execute(
            "SELECT id, workflow, source, workdir, status, started, finished, resumes FROM runs WHERE id = ?",
            (run_id,)).fetchone()
        if row is None:
            raise UnknownRunError(run_id)
        return RunRecord(*row)

    def list_runs(self):
        rows = self.conn.execute(
            "SELECT id, workflow, source, workdir, status, started, finished, resumes FROM runs ORDER BY id")
        return [RunRecord(*row) for row in rows]

    def prune(self, keep):
        """Delete every finished run but the ``keep`` newest ones; returns how many were deleted."""
        rows = self.conn.execute("SELECT id FROM runs WHERE status != 'running' ORDER BY id DESC").fetchall()
        doomed = [row[0] for row in rows[keep:]]
        for run_id in doomed:
            for table, column in (("attempts", "run_id"), ("jobs", "run_id"), ("runs", "id")):
                self.conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (run_id,))
        self.conn.commit()
        return len(doomed)

    def mark_resumed(self, run_id):
        self.conn.execute("UPDATE runs SET status = 'running', finished = NULL, resumes = resumes + 1 WHERE id = ?",
                          (run_id,))
        self.conn.commit()

    def finish_run(self, run_id, status):
        if status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {status}")
        self.conn.execute("UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, now_iso(), run_id))
        self.conn.commit()

    # -- jobs ------------------------------------------------------------------------------------------------
    def set_job_status(self, run_id, job, status):
        if status not in JOB_STATUSES:
            raise ValueError(f"unknown job status {status}")
        self.conn.execute("UPDATE jobs SET status = ? WHERE run_id = ? AND job = ?", (status, run_id, job))
        self.conn.commit()  # at once: a runner that dies must leave what it did on disk

    def job_statuses(self, run_id):
        """{job: status} of the run, in the run's order."""
        rows = self.conn.execute("SELECT job, status FROM jobs WHERE run_id = ? ORDER BY position", (run_id,))
        return dict(rows.fetchall())

    # -- attempts --------------------------------------------------------------------------------------------
    def start_attempt(self, run_id, job, attempt, delay_before):
        self.conn.execute(
            "INSERT INTO attempts (run_id, job, attempt, delay_before, started) VALUES (?, ?, ?, ?, ?)",
            (run_id, job, attempt, delay_before, now_iso()))
        self.set_job_status(run_id, job, "running")  # commits the attempt too

    def finish_attempt(self, run_id, job, attempt, exit_code, timed_out):
        self.conn.execute(
            "UPDATE attempts SET finished = ?, exit_code = ?, timed_out = ? WHERE run_id = ? AND job = ? AND attempt = ?",
            (now_iso(), exit_code, int(timed_out), run_id, job, attempt))
        self.conn.commit()

    def last_attempt(self, run_id, job):
        """The highest attempt number recorded for ``job`` in the run (0 when it never started)."""
        row = self.conn.execute("SELECT MAX(attempt) FROM attempts WHERE run_id = ? AND job = ?",
                                (run_id, job)).fetchone()
        return row[0] or 0

    def attempts(self, run_id, job=None):
        query = ("SELECT job, attempt, delay_before, started, finished, exit_code, timed_out FROM attempts "
                 "WHERE run_id = ?")
        params = [run_id]
        if job is not None:
            query += " AND job = ?"
            params.append(job)
        rows = self.conn.execute(query + " ORDER BY job, attempt", params).fetchall()
        return [AttemptRecord(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in rows]
