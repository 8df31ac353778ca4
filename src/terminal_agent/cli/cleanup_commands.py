"""`terminal-agent cleanup`."""

from __future__ import annotations

import typer


def cleanup(
    dry_run: bool = typer.Option(True, "--dry-run/--apply", help="Only list what would be removed (default)."),
) -> None:
    """Remove containers, networks and volumes carrying our labels whose owner is dead or TTL passed."""
    raise typer.Exit(2)
