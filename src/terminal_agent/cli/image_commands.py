"""`terminal-agent images ...`: the offline base image, task images, and a list of ours."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

app = typer.Typer(no_args_is_help=True)
console = Console(stderr=True)


@app.command("base")
def base(
    rebuild: bool = typer.Option(False, "--rebuild", help="Build it again even when it exists (debootstrap, ~1 min)."),
    mirror: str = typer.Option(None, "--mirror", help="Debian mirror URL (default: taken from this machine's apt sources)."),
    tag: str = typer.Option(None, "--tag", help="Image tag (default: terminal-agent/base:bookworm)."),
) -> None:
    """Make sure the offline base image exists (built by debootstrap only when absent or --rebuild)."""
    from terminal_agent.sandbox.images.manager import ImageManager

    manager = ImageManager()
    tag = tag or manager.base_image
    started = time.monotonic()
    with console.status(f"base image {tag}: debootstrap + import (about a minute) ..." if rebuild else f"base image {tag} ..."):
        image_id = manager.ensure_base_image(rebuild=rebuild, mirror=mirror, tag=tag)
    console.print(f"[green]ok[/green] {tag} {image_id[7:19]} ({time.monotonic() - started:.1f} s)")


@app.command("build")
def build(
    tasks_path: Path = typer.Argument(..., exists=True, help="A task source: CSV, parquet, task directory or a directory of them."),
    task_ids: list[str] = typer.Option(None, "--task", "-t", help="Only these task ids (repeatable)."),
    host_build_settings: bool = typer.Option(
        False, "--host-build-settings",
        help="Pass this machine's proxy variables, CA bundle and PIP_* index settings into the builds only "
        "(never into the images; the CA bundle and pip settings need docker buildx).",
    ),
) -> None:
    """Build (or find cached) the image of every task of a source (any task format); exits 1 if any fails."""
    from terminal_agent.errors import ImageError
    from terminal_agent.sandbox.images.manager import ImageManager
    from terminal_agent.tasks.loading import collect_tasks

    found, errors = collect_tasks(tasks_path)
    for error in errors:
        console.print(f"[yellow]skipped[/yellow] {escape(str(error))}", highlight=False, soft_wrap=True)
    tasks = [task for task in found if not task_ids or task.task_id in task_ids]
    if task_ids:
        missing = sorted(set(task_ids) - {task.task_id for task in tasks})
        if missing:
            console.print(f"[red]not in {escape(str(tasks_path))}:[/red] {escape(', '.join(missing))}", highlight=False)
            raise typer.Exit(1)
    settings = None
    if host_build_settings:
        from terminal_agent.sandbox.images.host_build_settings import HostBuildSettings

        settings = HostBuildSettings.from_host()
        console.print(
            f"host build settings: proxies {sorted(settings.build_args()) or 'none'}, CA bundle {settings.ca_bundle or 'none'}, "
            f"pip index {'set' if settings.pip_index_url else 'none'}",
            highlight=False,
        )
    manager = ImageManager(host_settings=settings)
    failures = 0
    for number, task in enumerate(tasks, 1):
        label = f"[{number}/{len(tasks)}] {task.task_id}"
        started = time.monotonic()
        with console.status(label) as status:

            def show_line(line: str, label: str = label) -> None:
                status.update(escape(f"{label}: {line[:100]}"))

            try:
                tag = manager.ensure_task_image(task, progress=show_line)
            except ImageError as exc:
                failures += 1
                console.print(f"[red]failed[/red] {escape(label)}: {escape(str(exc))}", highlight=False, soft_wrap=True)
                continue
        console.print(f"[green]ok[/green] {escape(label)} -> {tag} ({time.monotonic() - started:.1f} s)", highlight=False)
    stats = manager.stats
    console.print(
        f"{len(tasks) - failures} of {len(tasks)} images ready: {stats.builds} built, {stats.cache_hits} cached, "
        f"{len(stats.substitutions)} public images substituted"
    )
    if failures or errors:
        raise typer.Exit(1)


@app.command("list")
def list_images() -> None:
    """Our images: the base, substitutes and task images."""
    from terminal_agent.sandbox.images.manager import ImageManager

    table = Table("tag", "id", "size", "created", "task")
    table.columns[0].no_wrap = True
    for image in ImageManager().list_images():
        table.add_row(image.tag, image.id.removeprefix("sha256:"), f"{image.size_bytes / 1e6:.0f} MB", image.created, image.task_id or "")
    Console(width=None if sys.stdout.isatty() else 200).print(table)


@app.command("export")
def export(
    tasks_paths: list[Path] = typer.Argument(..., exists=True, help="Task sources: task dirs, a tasks CSV, parquet, or a dir of task dirs."),
    out_dir: Path = typer.Option(..., "--output", "-o", help="Export directory (created; an existing export is extended)."),
    task_ids: list[str] = typer.Option(None, "--task", "-t", help="Only these task ids (repeatable)."),
    splits: Path = typer.Option(
        None, "--splits", exists=True, dir_okay=False,
        help="A frozen splits file (dataset/splits/splits.json): export exactly its train and held-out tasks "
        "(shipped tasks looked up in TASKS, family instances regenerated).",
    ),
) -> None:
    """Write the base root filesystem (once, compressed) and each task's own layers, for the bwrap backend on nodes without Docker."""
    from terminal_agent.errors import ImageError, TaskFormatError
    from terminal_agent.sandbox.images.export import export_images
    from terminal_agent.tasks.loading import load_tasks

    tasks = []
    try:
        for path in tasks_paths:
            tasks.extend(load_tasks(path))
    except TaskFormatError as exc:
        console.print(f"[red]error:[/red] bad tasks: {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None  # bad input, as everywhere
    if task_ids:
        missing = sorted(set(task_ids) - {task.task_id for task in tasks})
        if missing:
            console.print(f"[red]no such task:[/red] {escape(', '.join(missing))}", highlight=False)
            raise typer.Exit(1)
        tasks = [task for task in tasks if task.task_id in task_ids]
    if splits is not None:
        from terminal_agent.errors import ConfigError
        from terminal_agent.task_quality.splits import read_splits, resolve_split

        try:
            document = read_splits(splits)
            tasks = [task for name in sorted(document["splits"]) for task in resolve_split(document, name, tasks)]
        except ConfigError as exc:
            console.print(f"[red]error:[/red] bad splits: {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
    started = time.monotonic()
    with console.status(f"exporting {len(tasks)} task image(s) to {escape(str(out_dir))} ...") as status:
        try:
            report = export_images(tasks, out_dir, progress=lambda line: status.update(escape(line[:100])))
        except ImageError as exc:
            from terminal_agent.errors import exit_code_for

            console.print(f"[red]export failed:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(exit_code_for(exc)) from None  # a broken export given as -o is bad input (2)
    for task_id, tag in sorted(report.images.items()):
        console.print(f"[green]ok[/green] {escape(task_id)} -> {escape(tag)}", highlight=False)
    console.print(
        f"{len(report.images)} task image(s) exported to {escape(str(out_dir))} in {time.monotonic() - started:.1f} s: "
        f"base {report.base_file} ({'written' if report.base_written else 'already there'}), "
        f"{report.layers_written} new layer(s), {report.bytes_written / 1e6:.1f} MB written. "
        "Copy the directory to the node and set sandbox.bwrap.images_dir (or TERMINAL_AGENT_IMAGES_DIR).",
        highlight=False,
    )
