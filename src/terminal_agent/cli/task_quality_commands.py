"""`terminal-agent tasks validate|screen`: oracle validation and difficulty screening.

Registered on :data:`terminal_agent.cli.task_commands.app` when this module is imported.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from terminal_agent.cli.task_commands import app

console = Console(stderr=True)


def _progress_bar(description: str, total: int) -> tuple[Progress, TaskID]:
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console)
    return progress, progress.add_task(description, total=total)


@app.command("validate")
def validate(
    tasks_path: Path = typer.Argument(..., help="Tasks: CSV, parquet, task dir or dir of task dirs."),
    manifest: Path = typer.Option(None, "--manifest", help="Where to write the JSON manifest (default: OUTPUT/validation.json)."),
    output_dir: Path = typer.Option(Path("runs/validation"), "--output-dir", "-o", help="Episode results and transcripts."),
    concurrency: int = typer.Option(2, "--concurrency", "-c", min=1, help="Episodes at once."),
    task_ids: list[str] = typer.Option(None, "--task", "-t", help="Only these task ids (repeatable)."),
    backend: str = typer.Option("docker", "--sandbox", help="Sandbox backend of the episodes: docker, bwrap (no daemon; needs an export) or ray."),
    images_dir: Path = typer.Option(None, "--images-dir", help="The export of `terminal-agent images export` (--sandbox bwrap; "
                                    "default: $TERMINAL_AGENT_IMAGES_DIR)."),
) -> None:
    """Build every task and check the no-work rule: a no-op agent scores at most 0.05, empty outputs score no
    more than the no-op, and the reference solution scores 1.0.

    The empty-output probe creates an empty file at every output path of the task (metadata "outputs", else the
    absolute paths its tests name that do not exist in the container). Exits 1 when any task is invalid or could
    not be checked.
    """
    from terminal_agent.cli.sandbox_options import sandbox_config_from_options
    from terminal_agent.tasks.loading import collect_tasks
    from terminal_agent.task_quality.no_work_rule import NO_WORK_MAX_SCORE
    from terminal_agent.task_quality.validation import validate_tasks, validation_manifest, write_manifest

    sandbox = sandbox_config_from_options(backend, images_dir)
    # a folder of tasks some of which cannot be read here (compose-only, no pytest file, ...) is validated for the
    # rest; each refused one is listed with its reason, counted as not valid, and kept in the manifest
    tasks, refused = collect_tasks(tasks_path)
    if task_ids:  # only the refused folders among those asked for (a row's location is file:line: not asked for)
        refused = [error for error in refused if Path(str(error.location)).name in set(task_ids)]
    for error in refused:
        console.print(f"refused: {escape(str(error))}", highlight=False)
    if task_ids:
        missing = sorted(set(task_ids) - {t.task_id for t in tasks} - {Path(str(e.location)).name for e in refused})
        if missing:
            raise typer.BadParameter(f"unknown task id(s): {', '.join(missing)}", param_hint="--task")
        tasks = [t for t in tasks if t.task_id in set(task_ids)]
    if not tasks and not refused:
        raise typer.BadParameter("no tasks selected", param_hint="TASKS")
    progress, bar = _progress_bar("validate", len(tasks) * 3)
    with progress:
        validations = validate_tasks(
            tasks,
            concurrency=concurrency,
            output_dir=output_dir,
            on_progress=lambda done, total, _trial: progress.update(bar, completed=done, total=total),
            sandbox=sandbox,
        )
    table = Table(
        "task", "no-op", "empty", "oracle", "verdict",
        title=f"validation: no-op <= {NO_WORK_MAX_SCORE}, empty <= no-op, oracle = 1.0",
    )

    def score(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    for v in validations:
        # messages quote paths and test ids ("[/tmp/x]", "test_a[1]") that rich would read as markup
        verdict = "[green]ok[/green]" if v.ok else "[red]" + escape("; ".join(v.problems + v.infrastructure_errors)) + "[/red]"
        table.add_row(escape(v.task_id), score(v.noop_score), score(v.empty_score), score(v.oracle_score), verdict)
    console.print(table)
    document = validation_manifest(validations, str(tasks_path))
    document["refused"] = [{"location": error.location, "field": error.field, "error": str(error)} for error in refused]
    path = write_manifest(document, manifest or output_dir / "validation.json")
    bad = [v for v in validations if not v.ok]
    total = len(validations) + len(refused)
    console.print(f"{len(validations) - len(bad)}/{total} valid, {len(refused)} refused when read; manifest: "
                  f"{escape(str(path))}", highlight=False)
    if bad or refused:
        raise typer.Exit(1)


@app.command("screen")
def screen(
    tasks_path: Path = typer.Argument(..., help="Tasks: CSV, parquet, task dir or dir of task dirs."),
    model: str = typer.Option(None, "--model", "-m", help="'embedded' or a litellm model; default: $LITELLM_MODEL, else embedded."),
    api_base: str = typer.Option(None, "--api-base", help="OpenAI-compatible endpoint (default: $LITE_LLM_API_BASE)."),
    attempts: int = typer.Option(8, "-k", "--attempts", min=1, help="Attempts per task."),
    band: str = typer.Option("2..6", "--band", help="Inclusive pass-count band of kept tasks, LOW..HIGH."),
    held_out: float = typer.Option(0.2, "--held-out", min=0.0, max=0.99, help="Share of kept tasks in the held-out split."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split."),
    temperature: float = typer.Option(0.7, "--temperature", min=0.0, help="Sampling temperature (screening needs diversity)."),
    max_tokens: int = typer.Option(None, "--max-tokens", min=1, help="Cap on tokens per model reply."),
    max_steps: int = typer.Option(10, "--max-steps", min=1, help="Model turns per episode."),
    concurrency: int = typer.Option(2, "--concurrency", "-c", min=1, help="Episodes at once."),
    output_dir: Path = typer.Option(Path("runs/screening"), "--output-dir", "-o", help="Journal, episodes and split manifests."),
    overwrite_splits: bool = typer.Option(False, "--overwrite-splits", help="Replace existing, different split manifests."),
) -> None:
    """Run k attempts per task, keep tasks whose pass count is inside the band, freeze train/held-out splits.

    Reports per task the reward spread of its group (mean, min..max, std) and whether all k rewards are equal
    (no GRPO signal), and the share of all-equal groups. Any litellm model works, e.g. --model openai/gpt-4o-mini
    (its key in the provider's environment variable). Re-running with the same output directory resumes:
    finished attempts are read from attempts.jsonl.
    """
    from terminal_agent.models.factory import build_model_client, config_from_spec
    from terminal_agent.tasks.loading import load_tasks
    from terminal_agent.task_quality.screening import ScreeningConfig, parse_band, screen_tasks

    low, high = parse_band(band)
    if not 0 <= low <= high:
        raise typer.BadParameter(f"band {low}..{high} must satisfy 0 <= LOW <= HIGH", param_hint="--band")
    if high > attempts:
        raise typer.BadParameter(f"band upper bound {high} exceeds k={attempts}", param_hint="--band")
    tasks = load_tasks(tasks_path)
    sampling = {"temperature": temperature}
    if max_tokens is not None:
        sampling["max_tokens"] = max_tokens
    config = ScreeningConfig(
        attempts=attempts,
        band=(low, high),
        held_out_fraction=held_out,
        seed=seed,
        max_steps=max_steps,
        concurrency=concurrency,
        sampling=sampling,
        overwrite_splits=overwrite_splits,
    )
    client = build_model_client(config_from_spec(model, api_base=api_base, max_tokens=max_tokens, temperature=temperature))
    progress, bar = _progress_bar(f"screen {client.name}", len(tasks) * attempts)
    with progress:
        summary = screen_tasks(
            tasks,
            client,
            output_dir,
            config,
            tasks_file=str(tasks_path),
            on_progress=lambda done, total, _trial: progress.update(bar, completed=done, total=total),
        )
    console.print(screening_table(summary))
    console.print(screening_footer(summary, output_dir), highlight=False)
    typer.echo(json.dumps({"train": summary["train"], "held_out": summary["held_out"]}))


def screening_table(summary: dict[str, Any]) -> Table:
    """The per-task table of a screening summary: passes, reward spread, all-equal, kept."""
    low, high = summary["band"]
    table = Table(
        "task", "passes", "scored", "errors", "mean", "min..max", "std", "all-equal", "kept",
        title=f"screening with {escape(summary['model'])}, band {low}..{high} of {summary['attempts']}",
    )

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for row in summary["tasks"]:
        kept = "[green]yes[/green]" if row["kept"] else ("incomplete" if not row["complete"] else "no")
        spread = "-" if row["reward_min"] is None else f"{row['reward_min']:.2f}..{row['reward_max']:.2f}"
        equal = {None: "-", True: "[yellow]yes[/yellow]", False: "no"}[row["all_equal"]]
        table.add_row(
            escape(row["task_id"]), str(row["passes"]), str(row["attempts"]), str(row["errors"]),
            number(row["mean_reward"]), spread, number(row["reward_std"]), equal, kept,
        )
    return table


def screening_footer(summary: dict[str, Any], output_dir: Path) -> str:
    """The summary line under the table: kept, splits, incomplete groups and the share of all-equal groups."""
    share = summary["share_all_equal"]
    return (
        f"kept {summary['n_kept']}/{summary['n_tasks']}: train {len(summary['train'])}, held-out {len(summary['held_out'])}; "
        f"{summary['n_incomplete']} incomplete (re-run to resume). "
        f"All-equal groups (no GRPO signal): {summary['n_all_equal']}/{summary['n_complete']} complete"
        + ("" if share is None else f" ({share:.0%})")
        + f". Manifests in {escape(str(output_dir))}"
    )
