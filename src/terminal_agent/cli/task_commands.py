"""`terminal-agent tasks ...`: convert tasks between formats and list them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from terminal_agent.tasks.conversion import OUTPUT_FORMATS, ConversionReport

if TYPE_CHECKING:  # imported lazily at run time
    from terminal_agent.tasks.inspection import InspectionReport

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
        bars: dict[str, TaskID] = {}

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


_STATUS_STYLE = {"mapped": "green", "default": "cyan", "kept": "yellow", "refused": "bold red"}


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value) if not isinstance(value, str) else value
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_inspection(report: InspectionReport, out: Console) -> None:
    """The rich rendering of an :class:`~terminal_agent.tasks.inspection.InspectionReport`."""
    from terminal_agent.tasks.harbor.task_toml import SettingStatus

    for task in report.tasks:
        name = task.task_id or Path(task.location).name
        verdict = "[green]ok[/green]" if task.ok else "[bold red]refused[/bold red]"
        origin = ", written by terminal-agent: its [metadata.terminal_agent] table is the source of truth" if task.written_here else ""
        out.print(f"[bold]{escape(name)}[/bold] ({escape(task.format)}{origin}): {verdict}  "
                  f"[dim]{escape(task.location)}[/dim]", highlight=False)
        if task.settings:
            table = Table(show_edge=False, pad_edge=False)
            for column in ("setting", "status", "as written", "task field", "value here", "note"):
                table.add_column(column, overflow="fold")
            for status in (SettingStatus.REFUSED, SettingStatus.MAPPED, SettingStatus.DEFAULT, SettingStatus.KEPT):
                style = _STATUS_STYLE[status.value]
                for setting in task.of(status):
                    table.add_row(
                        escape(setting.key), f"[{style}]{status.value}[/{style}]",
                        "" if status is SettingStatus.DEFAULT else escape(_shown(setting.value)),
                        escape(setting.field or ""), escape(_shown(setting.task_value)) if setting.field else "",
                        escape(setting.note),
                    )
            out.print(table)
        if task.summary:
            limits = task.summary["limits"]
            files = task.summary["environment_files"], task.summary["test_files"], task.summary["solution_files"]
            out.print(
                f"  grading {task.summary['grading']}; "
                f"{'no cpu limit' if limits['cpus'] is None else format(limits['cpus'], 'g') + ' cpu'}, "
                f"{'no memory limit' if limits['memory_mb'] is None else str(limits['memory_mb']) + ' MiB'}, "
                f"{'' if limits.get('storage_mb') is None else str(limits['storage_mb']) + ' MiB of disk, '}network "
                f"{'on' if limits['network'] else 'off'}; agent {limits['agent_timeout_s']:g} s, verifier "
                f"{limits['test_timeout_s']:g} s, build {limits['build_timeout_s']:g} s; files "
                f"env {files[0]['files']} ({files[0]['binary']} binary), tests {files[1]['files']} "
                f"({files[1]['binary']} binary), solution {files[2]['files']} ({files[2]['binary']} binary)",
                highlight=False,
            )
            for image in task.summary.get("images") or []:
                stand_in = image["stand_in"] or "[red]none[/red]"
                note = f" ({escape(image['note'])})" if image["note"] else ""
                out.print(f"  image {escape(image['image'])} -> stand-in {stand_in} where it cannot be pulled{note}",
                          highlight=False)
            if task.summary.get("test_requirements"):
                out.print("  test requirements (provided offline to the tests): "
                          + escape(", ".join(task.summary["test_requirements"])), highlight=False)
        if task.error:
            where = f"[{task.error_field}] " if task.error_field else ""
            out.print(f"  [red]error[/red] {escape(where + task.error)}", highlight=False, soft_wrap=True)
        out.print()
    bad = sum(not task.ok for task in report.tasks)
    out.print(f"{len(report.tasks)} task(s), " + (f"[red]{bad} refused or unreadable[/red]" if bad else "all usable"),
              highlight=False)


@app.command("inspect")
def inspect(
    src: Path = typer.Argument(..., help="A task directory, a directory of task directories, or a CSV/parquet file."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
) -> None:
    """Show, for each task and before anything is built, what was read, which defaults apply, what is kept
    but unused and what is refused (exit 1 if any task is refused or unreadable)."""
    import json

    from terminal_agent.errors import TaskFormatError
    from terminal_agent.tasks.inspection import inspect_tasks

    try:
        report = inspect_tasks(src)
    except TaskFormatError as exc:
        console.print(f"[red]bad source[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        render_inspection(report, Console(width=max(Console().width, 160)))
    if not report.ok:
        raise typer.Exit(1)
