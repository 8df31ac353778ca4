"""`terminal-agent view RUN_OR_RUNS_DIR` (stock Harbor's viewer on our runs) and `eval harbor-export RUN_DIR`."""

from __future__ import annotations

import signal
from pathlib import Path

import typer
from rich.console import Console

console = Console(stderr=True)


def view(
    path: Path = typer.Argument(..., help="An eval run, a folder of runs, or a local training run (its rollouts)."),
    port: int = typer.Option(None, "--port", "-p", help="Port on 127.0.0.1 (default: a free one)."),
    setup: bool = typer.Option(
        True, "--setup/--no-setup", help="Make the Harbor venv when there is none (about 30 s; needs Python 3.12)."
    ),
) -> None:
    """Browse runs in Harbor's viewer: jobs, trials, each trajectory's commands, outputs and rewards.

    Eval runs made before the Harbor job layout are converted first. The viewer binds to 127.0.0.1; Ctrl-C stops it.
    """
    from terminal_agent.errors import ViewerSetupError
    from terminal_agent.harbor_jobs.viewer import (
        find_harbor_python, jobs_folder_for, make_harbor_venv, setup_command, start_viewer,
    )

    target = jobs_folder_for(path)
    for run in target.converted:
        console.print(f"wrote the Harbor job layout into {run}", highlight=False)
    python = find_harbor_python()
    if python is None:
        if not setup:
            raise ViewerSetupError(f"no Harbor venv; make it with: {setup_command()}")
        console.print(f"making the Harbor venv once ({setup_command()}) ...", highlight=False)
        python = make_harbor_venv()
    viewer = start_viewer(target.jobs_dir, harbor_python=python, port=port)
    # SIGTERM as Ctrl-C: the finally below stops the viewer, which runs in its own session
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        console.print(f"Harbor viewer on {target.jobs_dir} (Ctrl-C stops it)", highlight=False)
        typer.echo(viewer.base_url + target.path())
        viewer.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()


def harbor_export(run_dir: Path = typer.Argument(..., help="An eval run directory (results.json, transcripts/).")) -> None:
    """Write the Harbor job layout into an eval run made before `eval run` wrote it (idempotent)."""
    from terminal_agent.harbor_jobs.eval_jobs import convert_run

    job_dir, trials, problems = convert_run(run_dir)
    for problem in problems:
        console.print(f"[yellow]warning[/yellow]: {problem}", highlight=False)
    console.print(f"wrote {trials} trials as the Harbor job {job_dir}", highlight=False)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
