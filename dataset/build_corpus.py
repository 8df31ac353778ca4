#!/usr/bin/env python3
"""Build dataset/latest_verified.csv from the corpus sources in dataset/corpus/.

    python dataset/build_corpus.py            # rewrite the CSV (the first, hand-written rows are kept)
    python dataset/build_corpus.py --check    # exit 1 if the CSV is not what the sources give

Each module of dataset/corpus/ (one per category) defines ``TASKS``; rows of the CSV whose id no
source defines (the four original sample tasks) are kept as they are, in front.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from _dataset_scripts import HERE  # first: makes terminal_agent importable from a bare checkout

from terminal_agent.tasks.csv_format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.model import Task

CORPUS_MODULES = (
    "originals",
    "text_logs",
    "debugging_python",
    "debugging_shell",
    "csv_json",
    "file_operations",
    "config_editing",
    "algorithms",
    "backup_archive",
    "performance",
    "edge_cases",
    "build_repair",
    "packaging",
    "speed_fixes",
    "git_history",
    "services",
    "sqlite_data",
    "log_forensics",
    "multi_file",
)
CSV_PATH = HERE / "latest_verified.csv"


def corpus_tasks() -> list[Task]:
    """Every task of the corpus sources, in module order."""
    sys.path.insert(0, str(HERE / "corpus"))
    tasks: list[Task] = []
    for name in CORPUS_MODULES:
        module = importlib.import_module(name)
        tasks.extend(spec.to_task() for spec in module.TASKS)
    ids = [task.task_id for task in tasks]
    repeated = sorted({task_id for task_id in ids if ids.count(task_id) > 1})
    if repeated:
        raise SystemExit(f"task ids defined twice in dataset/corpus: {', '.join(repeated)}")
    return tasks


def built_tasks() -> list[Task]:
    """The CSV's hand-written rows (ids no source defines) followed by the corpus tasks."""
    generated = corpus_tasks()
    own = {task.task_id for task in generated}
    existing = read_tasks_csv(CSV_PATH)
    if existing.errors:
        raise SystemExit("\n".join(str(error) for error in existing.errors))
    return [task for task in existing.tasks if task.task_id not in own] + generated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the CSV matches the sources")
    args = parser.parse_args(argv)
    tasks = built_tasks()
    if args.check:
        current = read_tasks_csv(CSV_PATH).tasks
        if current != tasks:
            print("dataset/latest_verified.csv is out of date: run python dataset/build_corpus.py", file=sys.stderr)
            return 1
        print(f"{len(tasks)} tasks, up to date")
        return 0
    write_tasks_csv(tasks, CSV_PATH)
    print(f"wrote {len(tasks)} tasks to {CSV_PATH.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
