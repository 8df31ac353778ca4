"""`terminal-agent cleanup`: list (default) or remove our leaked containers, networks and volumes."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

console = Console()


def cleanup(
    dry_run: bool = typer.Option(True, "--dry-run/--apply", help="Only list what would be removed (default)."),
) -> None:
    """Remove containers, networks and volumes carrying our labels whose owner is dead or TTL passed."""
    from terminal_agent.sandbox.cleanup import find_leaked, remove_object
    from terminal_agent.sandbox.docker_sandbox import docker_client

    client = docker_client()
    leaked = find_leaked(client)
    if not leaked:
        console.print("nothing to clean: no labelled container, network or volume is leaked")
        return
    table = Table("kind", "id", "name", "run id", "reason", title="would remove" if dry_run else "removing")
    for obj in leaked:
        table.add_row(obj.kind, obj.id[:12], escape(obj.name), escape(obj.run_id), escape(obj.reason))  # labels are free text
    console.print(table)
    if dry_run:
        console.print(f"{len(leaked)} object(s) would be removed; run with --apply to remove them")
        return
    failed = [obj for obj in leaked if not remove_object(client.api, obj)]
    console.print(f"removed {len(leaked) - len(failed)} object(s)" + (f", {len(failed)} failed" if failed else ""))
    if failed:
        raise typer.Exit(1)
