#!/usr/bin/env python3
"""Write the task subset screened with the embedded model (CPU is slow: a subset, not the corpus).

    python dataset/screening_subset.py runs/screening-subset.csv
    nice terminal-agent tasks screen runs/screening-subset.csv --model embedded -k 8 --temperature 0.8 \
        --max-steps 1 --max-tokens 48 -c 2 -o runs/screening
    python dataset/freeze_splits.py --screening runs/screening

The subset (``--corpus N --families M``, default 6 and 6): the first N easy shipped tasks that one
command solves, and one easy training instance (seed 0) of each of the first M families. With
``--per-category K`` it is instead the first K shipped tasks of every category (so every kind of work and
difficulty is screened), plus the family instances. On the
shared 2-core machine one attempt of the embedded model takes 15-45 s, so k = 8 over the whole
corpus would take hours.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _dataset_scripts import HERE  # first: makes terminal_agent importable from a bare checkout

from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.families import FAMILIES, generate_instances, get_family


def subset(corpus: int, families: int, per_category: int = 0) -> list:
    tasks = read_tasks_csv(HERE / "latest_verified.csv").tasks
    if per_category:
        taken: dict[str, int] = {}
        shipped = []
        for task in tasks:
            if taken.get(task.category, 0) < per_category:
                taken[task.category] = taken.get(task.category, 0) + 1
                shipped.append(task)
    else:
        shipped = [t for t in tasks if t.difficulty == "easy" and "one-command" in t.tags][:corpus]
    names = [name for name in FAMILIES if get_family(name).split_keys("train")][:families]
    generated = [task for name in names for task in generate_instances(name, 1, 0, difficulties=["easy"])]
    return shipped + generated


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, nargs="?", default=Path("runs/screening-subset.csv"))
    parser.add_argument("--corpus", type=int, default=6)
    parser.add_argument("--families", type=int, default=6)
    parser.add_argument("--per-category", type=int, default=0, help="the first K shipped tasks of every category")
    args = parser.parse_args()
    tasks = subset(args.corpus, args.families, args.per_category)
    write_tasks_csv(tasks, args.out)
    print(f"wrote {len(tasks)} tasks to {args.out}")
