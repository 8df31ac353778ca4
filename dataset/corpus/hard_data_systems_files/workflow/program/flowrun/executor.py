"""Running one attempt of one job: ``bash -c COMMAND`` in the workflow's directory, output to a log file."""

import os
import signal
import subprocess
from dataclasses import dataclass

TIMEOUT_EXIT = 124


@dataclass(frozen=True)
class AttemptOutcome:
    exit_code: int
    timed_out: bool
    log_path: str

    @property
    def succeeded(self):
        return self.exit_code == 0


def job_environment(job, run_id, attempt):
    env = dict(os.environ)
    env.update(dict(job.env))
    env.update({
        "FLOWRUN_RUN_ID": str(run_id),
        "FLOWRUN_JOB": job.name,
        "FLOWRUN_ATTEMPT": str(attempt),
        "FLOWRUN_PID": str(os.getpid()),
    })
    return env


def run_attempt(job, run_id, attempt, workdir, log_dir):
    """Run ``job`` once; its standard output and error go to ``log_dir/<job>.<attempt>.log``."""
    os.makedirs(log_dir, exist_ok=True)
    log_path = os.path.join(log_dir, f"{job.name}.{attempt}.log")
    with open(log_path, "wb") as log:
        process = subprocess.Popen(["bash", "-c", job.command], cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=job_environment(job, run_id, attempt),
                                   start_new_session=True)
        try:
            code = process.wait(timeout=job.timeout)
            return AttemptOutcome(code, False, log_path)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return AttemptOutcome(TIMEOUT_EXIT, True, log_path)
