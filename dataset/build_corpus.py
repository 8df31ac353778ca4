#!/usr/bin/env python3
"""Build the shipped corpus from its sources in dataset/corpus/, in both formats.

    python dataset/build_corpus.py            # rewrite dataset/latest_verified.csv and dataset/harbor/
    python dataset/build_corpus.py --check    # exit 1 if either is not what the sources give

Each module of dataset/corpus/ (one per category) defines ``TASKS``; rows of the CSV whose id no
source defines are kept as they are, in front. The same tasks are written as Harbor task folders under
dataset/harbor/ (one folder per task: task.toml, instruction.md, environment/, tests/, solution/), so Harbor
runs them as they are; tasks written with ``Spec(harbor=True)`` are graded there in Harbor's verifier mode.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from _dataset_scripts import HERE  # first: makes terminal_agent importable from a bare checkout

from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.formats import TASK_FORMATS
from terminal_agent.tasks.loading import load_tasks
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
    "python_packaging",
    "speed_fixes",
    "git_history",
    "services",
    "sqlite_data",
    "log_forensics",
    "multi_file",
    "hard_interpreters",
    "hard_data_systems",
    "hard_tooling",
)
CSV_PATH = HERE / "latest_verified.csv"
HARBOR_DIR = HERE / "harbor"


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
        stale = []
        if read_tasks_csv(CSV_PATH).tasks != tasks:
            stale.append("dataset/latest_verified.csv")
        harbor = load_tasks(HARBOR_DIR, strict=True) if HARBOR_DIR.is_dir() else []
        if sorted(harbor, key=lambda t: t.task_id) != sorted(tasks, key=lambda t: t.task_id):
            stale.append("dataset/harbor/")
        if stale:
            print(f"{' and '.join(stale)} out of date: run python dataset/build_corpus.py", file=sys.stderr)
            return 1
        print(f"{len(tasks)} tasks, up to date in both formats")
        return 0
    write_tasks_csv(tasks, CSV_PATH)
    TASK_FORMATS.get("harbor").write(tasks, HARBOR_DIR)
    graded = sum(1 for task in tasks if task.verifier.mode == "harbor")
    print(f"wrote {len(tasks)} tasks to {CSV_PATH.name} and to {HARBOR_DIR.name}/ ({graded} in Harbor verifier mode)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
