"""`terminal-agent sandbox ...`: poke around a task's container by hand."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(no_args_is_help=True)
console = Console(stderr=True)


@app.command("shell")
def shell(
    task_id: str = typer.Argument(..., help="Id of the task whose environment to open."),
    tasks: Path = typer.Option(Path("dataset/latest_verified.csv"), "--tasks", exists=True, help="Tasks source (CSV, parquet or task directory)."),
    timeout: float = typer.Option(None, "--timeout", help="Deadline of each command in seconds (default: the task's)."),
    with_tests: bool = typer.Option(False, "--with-tests", help="Copy the task's tests into /tests first."),
    backend: str = typer.Option("docker", "--backend", help="Sandbox backend (docker, bwrap, ...; see docs/sandbox.md)."),
) -> None:
    """Build (or reuse) the task's image, start its sandbox and read commands until EOF or `exit`."""
    import tempfile

    from terminal_agent.errors import ConfigError, ImageError
    from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig
    from terminal_agent.tasks.loading import load_tasks
    from terminal_agent.tasks.task_dirs import write_file, write_tree

    matches = [task for task in load_tasks(tasks, strict=False) if task.task_id == task_id]
    if not matches:
        console.print(f"[red]no task {escape(repr(task_id))} in {escape(str(tasks))}[/red]")
        raise typer.Exit(1)
    task = matches[0]
    try:
        config = SandboxConfig(backend=backend)
        with console.status(f"image of {escape(task_id)} ..."):
            image = resolve_task_image(config, task)
    except (ConfigError, ImageError, ValueError) as exc:  # an unknown backend, or no image for it
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    # the task's [environment.env] as in an episode, through the configured backend (no backend named here)
    sandbox = start_sandbox(config, image, task.limits, f"shell-{task_id}", env=task.env, task_id=task.task_id)
    try:
        if with_tests:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                if task.test_source:
                    write_file(root / "test_outputs.py", task.test_source)
                write_tree(root, task.test_support_files)  # any bytes, paths checked
                sandbox.upload_dir(root, "/tests")
        console.print(f"[green]{escape(task_id)}[/green] in {sandbox.id[:12]} ({escape(image)}); `exit` or Ctrl-D leaves")
        console.print(task.instruction, style="dim", highlight=False, markup=False)  # instructions hold brackets
        while True:
            try:
                cwd = sandbox.exec("pwd", 5).output.strip()
                command = input(f"{task_id}:{cwd}$ ")
            except (EOFError, KeyboardInterrupt):
                typer.echo()
                break
            if command.strip() in ("exit", "logout"):
                break
            if not command.strip():
                continue
            result = sandbox.exec(command, timeout)
            if result.output:
                typer.echo(result.output, nl=not result.output.endswith("\n"))
            if result.timed_out:
                console.print("[yellow]timed out (processes killed)[/yellow]")
            elif result.exit_code:
                console.print(f"[red]exit {result.exit_code}[/red]" + (" (out of memory)" if result.oom_killed else ""))
    finally:
        sandbox.close()
