"""`terminal-agent tasks prefetch-tools TASKS`: fetch the verifier tools of Harbor tasks before going offline.

A Harbor-mode verifier names tools for ``uvx -w`` / ``uv run --with`` / ``pip install`` (and the CTRF plugin for
``--ctrf``); offline, the grader hands them to the verifier from the host's tool cache
(:mod:`terminal_agent.rewards.verifier_runtime`). Run this where the package registry can be reached, then copy the
cache directory to the offline nodes (``HarborGradingConfig.tool_cache_dir``). Registered on
:data:`terminal_agent.cli.task_commands.app` when this module is imported.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from terminal_agent.cli.task_commands import app
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.tasks.model import Task

if TYPE_CHECKING:  # imported lazily at run time
    from terminal_agent.rewards.verifier_runtime import Requirement

console = Console(stderr=True)


@dataclass
class ToolFetch:
    """What prefetching one requirement gave."""

    requirement: str
    tasks: list[str] = field(default_factory=list)
    """Ids of the tasks whose verifier names it."""
    wheels: list[str] = field(default_factory=list)
    """File names of the wheels now in the cache (empty when unavailable)."""
    error: str | None = None
    """Why it cannot be provided offline; None when it can."""


def prefetch_verifier_tools(tasks: list[Task], config: HarborGradingConfig) -> list[ToolFetch]:
    """Fetch (or find in the cache) every tool the harbor-mode ``tasks`` name, once per requirement."""
    from terminal_agent.rewards.verifier_runtime import ToolUnavailable, fetch_tool, scan_scripts
    from terminal_agent.tasks.model import GradingMode

    wanted: dict[str, tuple[Requirement, list[str]]] = {}
    for task in tasks:
        if task.verifier.mode != GradingMode.HARBOR:
            continue
        for requirement in scan_scripts(task.test_support_files, config.ctrf_plugin):
            entry = wanted.setdefault(requirement.spec, (requirement, []))
            entry[1].append(task.task_id)
    results: list[ToolFetch] = []
    for spec, (requirement, task_ids) in sorted(wanted.items()):
        fetched = ToolFetch(spec, tasks=task_ids)
        try:
            fetched.wheels = [wheel.filename for wheel in fetch_tool(requirement, config).wheels]
        except ToolUnavailable as exc:
            fetched.error = str(exc)
        results.append(fetched)
    return results


@app.command("prefetch-tools")
def prefetch_tools(
    tasks_path: Path = typer.Argument(..., help="Tasks: CSV, parquet, task dir or dir of task dirs."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Tool cache to fill (default: the grader's own)."),
    wheelhouse: Path = typer.Option(None, "--wheelhouse", help="A directory of wheels searched before the registry."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON on stdout."),
) -> None:
    """Fetch every tool the Harbor verifiers of TASKS name, so that they grade offline. Exits 1 when one cannot be."""
    from terminal_agent.rewards.verifier_runtime import tool_cache_dir
    from terminal_agent.tasks.loading import load_tasks

    config = HarborGradingConfig(
        tool_cache_dir=str(cache_dir) if cache_dir else None, wheelhouse=str(wheelhouse) if wheelhouse else None
    )
    tasks = load_tasks(tasks_path, strict=False)
    with console.status("fetching verifier tools ..."):
        results = prefetch_verifier_tools(tasks, config)
    if as_json:
        typer.echo(json.dumps([asdict(result) for result in results], indent=2))
    else:
        table = Table(title=f"verifier tools of {len(tasks)} task(s)")
        for column in ("requirement", "tasks", "wheels", "status"):
            table.add_column(column)
        for result in results:
            status = "[green]ready[/green]" if result.error is None else f"[red]{escape(result.error[:160])}[/red]"
            table.add_row(escape(result.requirement), str(len(result.tasks)), str(len(result.wheels)), status)
        console.print(table)
        console.print(f"cache: {escape(str(tool_cache_dir(config)))}")
    if any(result.error for result in results):
        raise typer.Exit(1)
