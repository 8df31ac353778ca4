"""`terminal-agent tasks ...`: convert tasks between formats and list them."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from terminal_agent.tasks.conversion import OUTPUT_FORMATS, ConversionReport

app = typer.Typer(no_args_is_help=True)
console = Console(stderr=True)


def run_conversion(
    src: Path, dst: Path, to: str, *, workers: int = 4, strict: bool = False, quiet: bool = False
) -> ConversionReport:
    """Convert with a rich progress bar and print every bad row; shared by the CLI and dataset/ scripts."""
    from terminal_agent.tasks.conversion import convert_tasks

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    ) as progress:
        bars: dict[str, int] = {}

        def on_progress(done: int, total: int, phase: str) -> None:
            if phase not in bars:
                bars[phase] = progress.add_task(escape(f"{phase:>5} {src.name if phase == 'read' else dst.name}"), total=total)
            progress.update(bars[phase], completed=done, total=total)

        report = convert_tasks(src, dst, to, workers=workers, strict=strict, progress=on_progress)
    for error in report.errors:
        console.print(f"[red]bad[/red] {escape(str(error))}", highlight=False, soft_wrap=True)
    if report.output is not None:
        console.print(
            f"[green]wrote[/green] {len(report.tasks)} task(s) to {escape(str(report.output))} ({to})"
            + (f", [red]{len(report.errors)} bad[/red]" if report.errors else ""),
            highlight=False,
        )
    else:
        console.print(f"[red]nothing written[/red]: {len(report.errors)} bad, {len(report.tasks)} good", highlight=False)
    return report


@app.command("convert")
def convert(
    src: Path = typer.Argument(..., help="CSV file, parquet file, task directory, or directory of task directories."),
    dst: Path = typer.Argument(..., help="Output: a directory for tb/harbor, a file for csv/parquet."),
    to: str = typer.Option(..., "--to", help=f"Output format: {', '.join(OUTPUT_FORMATS)}."),
    workers: int = typer.Option(4, "--workers", "-j", min=1, help="Parallel readers/writers."),
    strict: bool = typer.Option(False, "--strict", help="Write nothing if any task is bad (the old output stays)."),
) -> None:
    """Convert tasks; every good task is written, every bad one reported (exit 1 if any)."""
    if to not in OUTPUT_FORMATS:
        console.print(f"[red]--to must be one of {', '.join(OUTPUT_FORMATS)}[/red]")
        raise typer.Exit(2)
    report = run_conversion(src, dst, to, workers=workers, strict=strict)
    if not report.ok:
        raise typer.Exit(1)


@app.command("list")
def list_tasks(
    src: Path = typer.Argument(..., help="CSV file, parquet file, task directory, or directory of task directories."),
) -> None:
    """Show the tasks of a source: id, difficulty, category, tests and weights, solution."""
    from terminal_agent.tasks.loading import collect_tasks

    tasks, errors = collect_tasks(src)
    table = Table(title=escape(f"{len(tasks)} task(s) in {src}"))
    for column in ("task_id", "difficulty", "category", "tests", "weights", "solution"):
        table.add_column(column, overflow="fold")
    for task in tasks:
        weights = " ".join(f"{weight:g}" for weight in task.test_weights.values())
        table.add_row(task.task_id, task.difficulty, task.category, str(len(task.test_weights)), weights,
                      "yes" if task.solution else "no")
    Console().print(table)
    for error in errors:
        console.print(f"[red]bad[/red] {escape(str(error))}", highlight=False, soft_wrap=True)
    if errors:
        raise typer.Exit(1)
