"""`terminal-agent cleanup`: list (default) or remove our leaked containers, networks, volumes and bwrap sandboxes."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

console = Console()


def cleanup(
    dry_run: bool = typer.Option(True, "--dry-run/--apply", help="Only list what would be removed (default)."),
    bwrap_dir: str = typer.Option(None, "--bwrap-dir", help="State dir of bwrap sandboxes (default: $TERMINAL_AGENT_BWRAP_DIR or the temp dir's)."),
) -> None:
    """Remove our labelled Docker objects and bwrap sandboxes whose owner is dead or TTL passed."""
    from terminal_agent.errors import DockerNotAvailableError
    from terminal_agent.sandbox.bwrap import state as bwrap_state
    from terminal_agent.sandbox.cleanup import find_leaked, remove_object
    from terminal_agent.sandbox.docker.sandbox import docker_client

    client = None
    leaked: list = []
    try:
        client = docker_client()
        leaked = find_leaked(client)
    except DockerNotAvailableError:
        console.print("no Docker daemon answers: containers not checked")
    root = bwrap_state.state_root(bwrap_dir)
    leaked_bwrap = bwrap_state.find_leaked(root)
    if not leaked and not leaked_bwrap:
        console.print("nothing to clean: no labelled container, network, volume or bwrap sandbox is leaked")
        return
    table = Table("kind", "id", "name", "run id", "reason", title="would remove" if dry_run else "removing")
    for obj in leaked:
        table.add_row(obj.kind, obj.id[:12], escape(obj.name), escape(obj.run_id), escape(obj.reason))  # labels are free text
    for item in leaked_bwrap:
        table.add_row("bwrap", escape(item.id), escape(str(item.directory)), escape(item.run_id), escape(item.reason))
    console.print(table)
    total = len(leaked) + len(leaked_bwrap)
    if dry_run:
        console.print(f"{total} object(s) would be removed; run with --apply to remove them")
        return
    failed = [obj for obj in leaked if not remove_object(client.api, obj)] if client is not None else []
    failed += [item for item in leaked_bwrap if not bwrap_state.remove_sandbox_state(item.directory)]
    console.print(f"removed {total - len(failed)} object(s)" + (f", {len(failed)} failed" if failed else ""))
    if failed:
        raise typer.Exit(1)
