"""Driving a run: jobs in dependency order, retries with backoff, skipping what cannot run, resuming."""

import json
import os
from dataclasses import dataclass

from .clock import Sleeper
from .dag import Graph
from .errors import RunStateError
from .executor import run_attempt
from .spec import parse_workflow


@dataclass
class RunSummary:
    run_id: int
    status: str
    """succeeded or failed."""
    ran: list
    """Jobs run in this invocation, in order."""
    failed: list
    skipped: list


class Scheduler:
    def __init__(self, store, sleeper=None, log_root=None):
        self.store = store
        self.sleeper = sleeper or Sleeper()
        self.log_root = log_root or os.path.join(os.path.dirname(os.path.abspath(store.path)), "logs")

    def start(self, workflow):
        """Create a run of ``workflow`` and execute it."""
        graph = Graph.from_workflow(workflow)
        order = graph.topological_order()
        run_id = self.store.create_run(workflow, order)
        return self._execute(run_id, workflow, graph, order, set())

    def resume(self, run_id):
        """Continue a failed or interrupted run: what already succeeded is not run again."""
        run = self.store.get_run(run_id)
        if run.status == "succeeded":
            raise RunStateError(f"run {run_id} already succeeded; nothing to resume")
        workflow = parse_workflow(json.loads(run.source), f"run {run_id}", run.workdir)
        graph = Graph.from_workflow(workflow)
        order = graph.topological_order()
        statuses = self.store.job_statuses(run_id)
        done = {job for job, status in statuses.items() if status == "succeeded"}
        self.store.mark_resumed(run_id)
        return self._execute(run_id, workflow, graph, order, done)

    def _execute(self, run_id, workflow, graph, order, done):
        succeeded = set(done)
        ran, failed, skipped = [], [], []
        log_dir = os.path.join(self.log_root, f"run-{run_id}")
        for name in order:
            if name in succeeded:
                continue
            job = workflow.jobs[name]
            if any(dep not in succeeded for dep in job.deps):
                self.store.set_job_status(run_id, name, "skipped")
                skipped.append(name)
                continue
            ran.append(name)
            if self._run_job(run_id, job, workflow.workdir, log_dir):
                succeeded.add(name)
            else:
                failed.append(name)
        status = "succeeded" if len(succeeded) == len(order) else "failed"
        self.store.finish_run(run_id, status)
        return RunSummary(run_id, status, ran, failed, skipped)

    def _run_job(self, run_id, job, workdir, log_dir):
        """Run ``job`` with its retries; True when an attempt succeeded."""
        attempt = self.store.last_attempt(run_id, job.name)  # a resumed job continues its numbering
        failures = 0
        while True:
            attempt += 1
            delay = job.backoff.delay(failures) if failures else 0.0
            if delay:
                self.sleeper.sleep(delay)
            self.store.start_attempt(run_id, job.name, attempt, delay)
            outcome = run_attempt(job, run_id, attempt, workdir, log_dir)
            self.store.finish_attempt(run_id, job.name, attempt, outcome.exit_code, outcome.timed_out)
            if outcome.succeeded:
                self.store.set_job_status(run_id, job.name, "succeeded")
                return True
            failures += 1
            if failures > job.retries:
                self.store.set_job_status(run_id, job.name, "failed")
                return False
