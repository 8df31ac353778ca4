#!/usr/bin/env python3
"""Convert the task CSV (default: dataset/latest_verified.csv) into task directories.

    python dataset/convert_dataset_to_tasks.py                         # -> dataset/tasks/ (terminal-bench v1)
    python dataset/convert_dataset_to_tasks.py --format harbor --out /tmp/harbor-tasks
    python dataset/convert_dataset_to_tasks.py --csv my.csv --out tasks/ --workers 8 --strict

Every good row is written; every bad row is reported with its line and field, and the exit
status is 1. The output directory is replaced atomically at the end (an existing one stays as it
was if the conversion fails, or with --strict when any row is bad). Same as
``terminal-agent tasks convert CSV OUT --to tb``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _dataset_scripts import HERE  # first: makes terminal_agent importable from a bare checkout

from terminal_agent.cli.task_commands import run_conversion
from terminal_agent.errors import TerminalAgentError
from terminal_agent.tasks.formats import directory_formats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", type=Path, default=HERE / "latest_verified.csv", help="task CSV (or any task source)")
    parser.add_argument("--out", type=Path, default=HERE / "tasks", help="output directory (default: dataset/tasks)")
    layouts = [fmt.name for fmt in directory_formats()]
    parser.add_argument("--format", choices=layouts, default="tb", help="task directory layout (default: tb)")
    parser.add_argument("--workers", "-j", type=int, default=4, help="parallel writers (default: 4)")
    parser.add_argument("--strict", action="store_true", help="write nothing if any row is bad")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        report = run_conversion(args.csv, args.out, args.format, workers=args.workers, strict=args.strict,
                                quiet=args.quiet)
    except TerminalAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
