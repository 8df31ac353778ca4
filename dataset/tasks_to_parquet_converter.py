#!/usr/bin/env python3
"""Turn tasks (CSV, task directories, or a directory of them) into parquet rows for rLLM/verl.

    python dataset/tasks_to_parquet_converter.py                                  # CSV -> dataset/train.parquet
    python dataset/tasks_to_parquet_converter.py dataset/tasks --out data/train.parquet
    python dataset/tasks_to_parquet_converter.py --test-fraction 0.25 --test-out data/test.parquet

Each row has ``prompt`` (the instruction as a chat list), ``data_source``, ``ability``,
``reward_model`` and a flat ``extra_info`` from which ``DockerIsolatedEnv.from_dict`` rebuilds the
task. Bad tasks are reported (exit status 1), good ones written; files are replaced atomically.
With ``--test-fraction`` a deterministic split (by task id and ``--seed``) goes to ``--test-out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _dataset_scripts import HERE  # first: makes terminal_agent importable from a bare checkout
from rich.markup import escape

from terminal_agent.cli.task_commands import console, run_conversion
from terminal_agent.errors import TerminalAgentError
from terminal_agent.tasks.conversion import split_by_layout, split_tasks
from terminal_agent.tasks.formats import get_format
from terminal_agent.tasks.loading import collect_tasks
from terminal_agent.tasks.parquet.rows import write_parquet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path, nargs="?", default=HERE / "latest_verified.csv",
                        help="task source (default: dataset/latest_verified.csv)")
    parser.add_argument("--out", type=Path, default=HERE / "train.parquet", help="train parquet file")
    parser.add_argument("--test-out", type=Path, default=None, help="test parquet file (with --test-fraction)")
    parser.add_argument("--test-fraction", type=float, default=0.0, help="share of tasks for the test split (0..1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the train/test split")
    parser.add_argument("--workers", "-j", type=int, default=4, help="parallel readers (default: 4)")
    parser.add_argument("--strict", action="store_true", help="write nothing if any task is bad")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if not 0.0 <= args.test_fraction < 1.0:
        parser.error("--test-fraction must be in [0, 1)")
    if args.test_fraction > 0 and args.test_out is None:
        parser.error("--test-fraction needs --test-out")
    try:
        if args.test_fraction == 0:
            report = run_conversion(args.src, args.out, "parquet", workers=args.workers, strict=args.strict,
                                    quiet=args.quiet)
            return 0 if report.ok else 1
        tasks, errors = collect_tasks(args.src, workers=args.workers)
        tasks, unwritable = split_by_layout(tasks, "parquet")
        errors += unwritable
        for output in (args.out, args.test_out):
            get_format("parquet").check_output(output)  # a symlinked output is refused, as `tasks convert` does
        for error in errors:
            console.print(f"[red]bad[/red] {escape(str(error))}", highlight=False, soft_wrap=True)
        if errors and args.strict:
            console.print("[red]nothing written[/red] (--strict)")
            return 1
        train, test = split_tasks(tasks, args.test_fraction, seed=args.seed)
        write_parquet(train, args.out, split="train")
        write_parquet(test, args.test_out, split="test")
        console.print(f"[green]wrote[/green] {len(train)} train task(s) to {escape(str(args.out))}, "
                      f"{len(test)} test to {escape(str(args.test_out))}")
        return 1 if errors else 0
    except TerminalAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
