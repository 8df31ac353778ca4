"""`terminal-agent eval behaviour RUN_DIR [RUN_DIR ...]`: what the agent did differently, from the transcripts.

Registered on :data:`terminal_agent.cli.eval_commands.app` by that module.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

console = Console(stderr=True)


def run_names(run_dirs: list[Path], names: str | None) -> list[str]:
    """The column names: ``--names`` split on commas, else each directory's name (its parent's name put
    before it when two runs share one, as ``seed0/eval_trained`` and ``seed1/eval_trained`` do)."""
    if names is not None:
        given = [name.strip() for name in names.split(",")]
        if len(given) != len(run_dirs) or not all(given):
            raise typer.BadParameter(f"give one non-empty name per run directory ({len(run_dirs)}), got {names!r}", param_hint="--names")
        if len(set(given)) != len(given):
            raise typer.BadParameter(f"names must differ, got {names!r}", param_hint="--names")
        return given
    plain = [path.resolve().name or str(path) for path in run_dirs]
    chosen = [f"{path.resolve().parent.name}/{name}" if plain.count(name) > 1 else name for path, name in zip(run_dirs, plain)]
    return [name if chosen.count(name) == 1 else f"{name} ({index + 1})" for index, name in enumerate(chosen)]


def behaviour(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN_DIR", help="Run directories of `eval run` (or the learning experiment's eval_base, eval_trained ...); the first is the baseline."),
    names: str = typer.Option(None, "--names", help="Comma-separated column names, one per run directory (default: the directories' names)."),
    json_out: Path = typer.Option(None, "--json", help="Also write the summaries and the pairing by task as JSON here."),
    top: int = typer.Option(8, "--top", min=1, help="How many of the most common first words of bash commands each run lists."),
) -> None:
    """How runs differ in what the agent did, from their transcripts.

    Endings (finish, format errors, max steps, timeouts), replies without an action or cut at the token cap,
    tools per turn, bash commands, reply length; pass rate and reward beside them.

    Prints markdown tables (measures by run and the last - first difference, then bash first words, then every
    later run paired with the first by task). A missing or corrupt transcript is counted and named, never fatal;
    a path that is not a run directory exits 2 naming it.
    """
    from terminal_agent.evaluation.behaviour import behaviour_json, summarize_runs
    from terminal_agent.evaluation.behaviour_report import behaviour_tables

    labels = run_names(run_dirs, names)
    runs = summarize_runs(dict(zip(labels, run_dirs)), top=top)
    typer.echo(behaviour_tables(runs), nl=False)
    for run in runs:
        if run.problems:
            console.print(f"{run.name}: {len(run.problems)} transcript(s) not used (listed in the output)", highlight=False)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(behaviour_json(runs), indent=2) + "\n")
        console.print(f"wrote {json_out}", highlight=False)


__all__ = ["behaviour", "run_names"]
