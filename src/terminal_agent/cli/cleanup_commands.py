"""`terminal-agent cleanup`: list (default) or remove the leaked sandboxes of every registered backend."""

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
    """Remove our labelled sandboxes (containers, networks, volumes, bwrap state ...) whose owner is dead or TTL passed."""
    from terminal_agent.sandbox.cleanup import remove_leaked, scan_leaked
    from terminal_agent.sandbox.config import SandboxConfig

    config = SandboxConfig.model_validate({"bwrap": {"state_dir": bwrap_dir}} if bwrap_dir else {})
    scan = scan_leaked(config)
    for backend, reason in scan.unreachable.items():
        console.print(f"{escape(backend)}: not checked ({escape(reason)})")
    if not scan.leaked:
        console.print("nothing to clean: no labelled sandbox object of any backend is leaked")
        return
    table = Table("backend", "kind", "id", "name", "run id", "reason", title="would remove" if dry_run else "removing")
    for obj in scan.leaked:  # labels are free text
        short_id = obj.id if len(obj.id) <= 20 else obj.id[:12]
        table.add_row(obj.backend, obj.kind, escape(short_id), escape(obj.name), escape(obj.run_id), escape(obj.reason))
    console.print(table)
    total = len(scan.leaked)
    if dry_run:
        console.print(f"{total} object(s) would be removed; run with --apply to remove them")
        return
    removed = remove_leaked(scan.leaked, config)
    failed = total - len(removed)
    console.print(f"removed {len(removed)} object(s)" + (f", {failed} failed" if failed else ""))
    if failed:
        raise typer.Exit(1)
