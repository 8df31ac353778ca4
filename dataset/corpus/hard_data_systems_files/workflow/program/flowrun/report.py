"""The status of a run, as JSON or as text."""

import json


def run_status(store, run_id):
    run = store.get_run(run_id)
    statuses = store.job_statuses(run_id)
    attempts = {}
    for record in store.attempts(run_id):
        attempts.setdefault(record.job, []).append({
            "attempt": record.attempt,
            "delay_before": record.delay_before,
            "exit_code": record.exit_code,
            "timed_out": record.timed_out,
            "started": record.started,
            "finished": record.finished,
        })
    return {
        "run": run.id,
        "workflow": run.workflow,
        "status": run.status,
        "started": run.started,
        "finished": run.finished,
        "resumes": run.resumes,
        "jobs": {job: {"status": status, "attempts": attempts.get(job, [])} for job, status in statuses.items()},
    }


def status_json(store, run_id):
    return json.dumps(run_status(store, run_id), indent=2)


def status_text(store, run_id):
    data = run_status(store, run_id)
    lines = [f"run {data['run']} ({data['workflow']}): {data['status']}"
             + (f", resumed {data['resumes']}x" if data["resumes"] else "")]
    width = max(len(job) for job in data["jobs"]) if data["jobs"] else 0
    for job, info in data["jobs"].items():
        tries = info["attempts"]
        codes = ",".join("?" if a["exit_code"] is None else str(a["exit_code"]) for a in tries)
        lines.append(f"  {job.ljust(width)}  {info['status']:<9}  attempts {len(tries)}" + (f" [{codes}]" if tries else ""))
    return "\n".join(lines)


def runs_text(store):
    return "\n".join(f"{run.id}\t{run.workflow}\t{run.status}\t{run.started}" for run in store.list_runs())
