"""`terminal-agent tasks audit`: the cheap-trick audit of any task set (registered on the tasks app on import)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from terminal_agent.cli.task_commands import app

console = Console(stderr=True)


@app.command("audit")
def audit(
    tasks_path: Path = typer.Argument(None, help="Tasks: CSV, parquet, a terminal-bench or Harbor task folder, or a "
                                      "folder of them."),
    output_dir: Path = typer.Option(Path("runs/audit"), "--output-dir", "-o", help="Episodes and the JSON report."),
    report: Path = typer.Option(None, "--report", help="Where to write the JSON report (default: OUTPUT/audit.json)."),
    threshold: float = typer.Option(0.05, "--threshold", min=0.0, max=1.0,
                                    help="The most a trick that does no work may earn before the task counts as beaten."),
    trick_names: list[str] = typer.Option(None, "--trick", help="Only these tricks (repeatable; see --list-tricks)."),
    task_ids: list[str] = typer.Option(None, "--task", "-t", help="Only these task ids (repeatable)."),
    sample: int = typer.Option(0, "--sample", min=0, help="Audit this many tasks, spread evenly over the set (0: all)."),
    concurrency: int = typer.Option(2, "--concurrency", "-c", min=1, help="Episodes at once."),
    backend: str = typer.Option("docker", "--sandbox", help="Sandbox backend of the episodes: docker, bwrap or ray."),
    images_dir: Path = typer.Option(None, "--images-dir", help="The image export for --sandbox bwrap."),
    list_tricks: bool = typer.Option(False, "--list-tricks", help="List the tricks and exit."),
) -> None:
    """Run a battery of cheap agents on every task in its real sandbox, graded by its real grader, and print the
    tasks a trick beats (scores above what it may earn), with the trick. The task's own negative solutions run
    too. Exits 1 when any task is beaten, 0 otherwise; infrastructure errors are reported, never scored."""
    from terminal_agent.task_quality.audit import audit_report, audit_tasks, selected_tricks
    from terminal_agent.task_quality.cheap_tricks import CHEAP_TRICKS

    if list_tricks:
        for name in CHEAP_TRICKS.names():
            entry = CHEAP_TRICKS.get(name)
            typer.echo(f"{name}  (allowed {entry.allowed:g})  {entry.summary}")
        return
    if tasks_path is None:
        raise typer.BadParameter("give the tasks to audit", param_hint="TASKS")
    from terminal_agent.cli.sandbox_options import sandbox_config_from_options
    from terminal_agent.task_quality.validation import write_manifest
    from terminal_agent.tasks.loading import load_tasks

    selected_tricks(trick_names)  # an unknown trick name fails before anything is built
    sandbox = sandbox_config_from_options(backend, images_dir)
    tasks = load_tasks(tasks_path)
    if task_ids:
        missing = sorted(set(task_ids) - {t.task_id for t in tasks})
        if missing:
            raise typer.BadParameter(f"unknown task id(s): {', '.join(missing)}", param_hint="--task")
        tasks = [t for t in tasks if t.task_id in set(task_ids)]
    if sample and sample < len(tasks):
        step = len(tasks) / sample
        tasks = [tasks[int(index * step)] for index in range(sample)]
    if not tasks:
        raise typer.BadParameter("no tasks selected", param_hint="TASKS")
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)
    bar = progress.add_task("audit", total=None)
    with progress:
        audits = audit_tasks(tasks, tricks=trick_names, threshold=threshold, concurrency=concurrency,
                             output_dir=output_dir, sandbox=sandbox,
                             on_progress=lambda done, total, _trial: progress.update(bar, completed=done, total=total))
    table = Table("task", "beaten by (score > allowed)", "infrastructure errors",
                  title=f"cheap-trick audit of {len(audits)} task(s): no-work tricks may earn {threshold:g}")
    for item in audits:
        errors = [r.trick for r in item.results if r.outcome.value == "infrastructure_error"]
        if item.beaten_by or errors:
            beaten = ", ".join(f"{r.trick} {r.score:.3f} > {r.allowed:g}" for r in item.beaten_by)
            table.add_row(escape(item.task_id), escape(beaten) or "-", escape(", ".join(errors)) or "-")
    console.print(table)
    document = audit_report(audits, source=str(tasks_path), threshold=threshold, tricks=trick_names)
    path = write_manifest(document, report or output_dir / "audit.json")
    console.print(f"{document['n_beaten']}/{len(audits)} task(s) beaten; report: {escape(str(path))}", highlight=False)
    typer.echo(json.dumps(document["beaten"]))
    if document["n_beaten"]:
        raise typer.Exit(1)
