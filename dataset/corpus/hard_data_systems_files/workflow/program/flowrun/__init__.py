"""flowrun: run a workflow (a DAG of shell jobs) with retries, keeping its state in SQLite so that a run that
failed or was interrupted can be resumed.

spec.py reads workflow files, dag.py orders the jobs, backoff.py is the retry policy, executor.py runs one job,
state.py is the SQLite store, scheduler.py drives a run, report.py formats the status, cli.py is the command line.
"""

__version__ = "2.3.1"
