"""`terminal-agent tasks generate FAMILY`: write instances of a procedural task family in any format.

Registered on :data:`terminal_agent.cli.task_commands.app` when this module is imported.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from terminal_agent.cli.task_commands import app
from terminal_agent.tasks.conversion import OUTPUT_FORMATS

console = Console(stderr=True)


@app.command("generate")
def generate(
    family: str = typer.Argument(None, help="Family name; `--list` shows them."),
    output: Path = typer.Option(None, "--output", "-o", help="A directory for tb/harbor, a file for csv/parquet."),
    to: str = typer.Option("csv", "--to", help=f"Output format: {', '.join(OUTPUT_FORMATS)}."),
    count: int = typer.Option(10, "--count", "-n", min=1, help="Number of distinct instances."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed; the same seed gives the same instances."),
    split: str = typer.Option("train", "--split", help="train or held_out: which half of the family's keys to draw from."),
    difficulty: list[str] = typer.Option(None, "--difficulty", "-d", help="easy and/or medium (repeatable; default both, alternating)."),
    list_families: bool = typer.Option(False, "--list", help="List the families and their key splits, then exit."),
) -> None:
    """Generate COUNT instances of FAMILY (seeded) and write them with the task format writers."""
    from terminal_agent.tasks.conversion import write_tasks
    from terminal_agent.tasks.families import FAMILIES, SPLITS, family_parameter_space, generate_instances, get_family

    if list_families:
        typer.echo(json.dumps({name: family_parameter_space(name) for name in FAMILIES}, indent=2))
        return
    if family is None:
        raise typer.BadParameter(f"name a family: {', '.join(FAMILIES)}", param_hint="FAMILY")
    if to not in OUTPUT_FORMATS:
        raise typer.BadParameter(f"must be one of {', '.join(OUTPUT_FORMATS)}", param_hint="--to")
    if split not in SPLITS:
        raise typer.BadParameter(f"must be one of {', '.join(SPLITS)}", param_hint="--split")
    if output is None:
        raise typer.BadParameter("where to write the instances", param_hint="--output")
    if family in FAMILIES and count > 0 and not get_family(family).split_keys(split):
        other = "held_out" if split == "train" else "train"
        raise typer.BadParameter(
            f"family {family} has no {split} keys (it is held out as a whole family: use --split {other})"
            if split == "train" else f"family {family} has no {split} keys: use --split {other}",
            param_hint="--split",
        )
    difficulties = difficulty or None
    tasks = generate_instances(family, count, seed, split=split, difficulties=difficulties)
    path = write_tasks(tasks, output, to)
    console.print(
        f"[green]wrote[/green] {len(tasks)} {escape(family)} instance(s) ({split}, seed {seed}) to {escape(str(path))} ({to})",
        highlight=False,
    )
