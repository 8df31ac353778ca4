"""python3 -m flowrun --db STATE.sqlite COMMAND

    validate WORKFLOW.json            check the file and its dependency graph
    graph WORKFLOW.json [--dot]       print the jobs in the order they would run (or Graphviz)
    run WORKFLOW.json [--time-scale S]  run it; prints "run ID succeeded|failed"
    resume RUN_ID [--time-scale S]    continue a failed or interrupted run
    status RUN_ID [--json]            the state of a run
    runs                              every run in the database
    retry-plan WORKFLOW.json          the waits before each retry of every job
    prune --keep N                    forget all but the N newest finished runs

Exit status: 0 success, 1 the run failed, 2 bad input (workflow file, run id, cycle).
"""

import argparse
import sys

from .clock import Sleeper
from .dag import Graph
from .errors import FlowrunError
from .lock import RunnerLock
from .report import runs_text, status_json, status_text
from .scheduler import Scheduler
from .spec import load_workflow
from .state import StateStore


def build_parser():
    parser = argparse.ArgumentParser(prog="flowrun", description="Run a DAG of shell jobs with retries.")
    parser.add_argument("--db", default="flowrun.sqlite", help="the state database (created when missing)")
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate")
    validate.add_argument("workflow")
    graph = commands.add_parser("graph")
    graph.add_argument("workflow")
    graph.add_argument("--dot", action="store_true")
    run = commands.add_parser("run")
    run.add_argument("workflow")
    run.add_argument("--time-scale", type=float, default=1.0, help="multiply retry waits (0: do not wait)")
    resume = commands.add_parser("resume")
    resume.add_argument("run_id", type=int)
    resume.add_argument("--time-scale", type=float, default=1.0)
    status = commands.add_parser("status")
    status.add_argument("run_id", type=int)
    status.add_argument("--json", action="store_true")
    commands.add_parser("runs")
    plan = commands.add_parser("retry-plan")
    plan.add_argument("workflow")
    prune = commands.add_parser("prune")
    prune.add_argument("--keep", type=int, required=True)
    return parser


def _summary(summary):
    line = f"run {summary.run_id} {summary.status}"
    if summary.failed:
        line += f" (failed: {', '.join(summary.failed)})"
    if summary.skipped:
        line += f" (skipped: {', '.join(summary.skipped)})"
    return line


def run_command(args):
    if args.command == "retry-plan":
        workflow = load_workflow(args.workflow)
        for name, job in workflow.jobs.items():
            delays = job.backoff.delays(job.retries)
            shown = ", ".join(f"{delay:g}s" for delay in delays) if delays else "no retries"
            print(f"{name}: {job.retries + 1} attempts at most; waits {shown}")
        return 0
    if args.command in ("validate", "graph"):
        workflow = load_workflow(args.workflow)
        graph = Graph.from_workflow(workflow)
        order = graph.topological_order()
        if args.command == "validate":
            print(f"{workflow.name}: {len(order)} jobs, ok")
        elif args.dot:
            print(graph.to_dot(workflow.name))
        else:
            levels = graph.levels()
            for job in order:
                print(f"{levels[job]}\t{job}")
        return 0
    with StateStore(args.db) as store:
        if args.command == "run":
            workflow = load_workflow(args.workflow)
            with RunnerLock(args.db):
                summary = Scheduler(store, Sleeper(args.time_scale)).start(workflow)
            print(_summary(summary))
            return 0 if summary.status == "succeeded" else 1
        if args.command == "resume":
            with RunnerLock(args.db):
                summary = Scheduler(store, Sleeper(args.time_scale)).resume(args.run_id)
            print(_summary(summary))
            return 0 if summary.status == "succeeded" else 1
        if args.command == "prune":
            if args.keep < 0:
                print("flowrun: --keep must be >= 0", file=sys.stderr)
                return 2
            print(f"pruned {store.prune(args.keep)} runs")
            return 0
        if args.command == "status":
            print(status_json(store, args.run_id) if args.json else status_text(store, args.run_id))
            return 0
        if args.command == "runs":
            print(runs_text(store))
            return 0
    return 2


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return run_command(args)
    except FlowrunError as error:
        print(f"flowrun: {error}", file=sys.stderr)
        return error.exit_status
