#!/usr/bin/env python3
"""Validate every shipped task and a sample of family instances; pin the results in a manifest.

    python dataset/validate_corpus.py                       # all of latest_verified.csv + 2 instances per family and split
    python dataset/validate_corpus.py --per-family 4 -c 4   # more instances, more containers at once
    python dataset/validate_corpus.py --task fix-crlf-script     # re-validate one task, update its manifest entry
    python dataset/validate_corpus.py --families-only        # only the family instances (dataset/family_validation.json)

Each task runs up to three times in a real container and must keep the no-work rule
(terminal_agent.task_quality.no_work_rule): a no-op agent scores at most 0.05, the empty-output
probe (an empty file at every output path the task names) scores no more than the no-op, and the
reference solution scores 1.0. The CSV's results and content hashes go to
dataset/validation_manifest.json (committed; CI checks that every shipped task is in it with its
current hashes); the family instances' results go to dataset/family_validation.json. Exit 1
when anything is invalid or could not be checked.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from _dataset_scripts import HERE  # first: makes terminal_agent importable from a bare checkout

from terminal_agent.task_quality.validation import validate_tasks, validation_manifest, write_manifest
from terminal_agent.tasks.csv.format import read_tasks_csv
from terminal_agent.tasks.families import FAMILIES, SPLITS, generate_instances

CSV_PATH = HERE / "latest_verified.csv"
MANIFEST_PATH = HERE / "validation_manifest.json"
FAMILY_MANIFEST_PATH = HERE / "family_validation.json"


def _report(label: str, validations, seconds: float) -> list:
    bad = [v for v in validations if not v.ok]
    print(f"{label}: {len(validations) - len(bad)}/{len(validations)} valid in {seconds:.0f} s")
    for name in ("noop", "empty"):
        scores = [getattr(v, f"{name}_score") for v in validations if getattr(v, f"{name}_score") is not None]
        if scores:
            print(f"  {name} scores: mean {sum(scores) / len(scores):.3f}, max {max(scores):.3f}, "
                  f"{sum(1 for x in scores if x == 0)} of {len(scores)} at 0")
    probed = sum(1 for v in validations if v.empty_paths)
    print(f"  empty-output probe ran on {probed} (the others name no output path: the no-op's score)")
    for v in bad:
        print(f"  INVALID {v.task_id}: no-op {v.noop_score} empty {v.empty_score} oracle {v.oracle_score} "
              f"{v.problems} {v.infrastructure_errors}")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", "-c", type=int, default=3, help="episodes at once (default 3)")
    parser.add_argument("--per-family", type=int, default=2, help="instances per family and split (0: none)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the family instances")
    parser.add_argument("--task", action="append", help="only this shipped task (repeatable; updates its manifest entry)")
    parser.add_argument("--families-only", action="store_true", help="only the family instances (keeps the shipped manifest)")
    args = parser.parse_args(argv)
    bad: list = []
    if not args.families_only:
        bad = _validate_shipped(args)

    family_bad = []
    if args.per_family and not args.task:
        instances = [
            task
            for name in FAMILIES
            for split in SPLITS
            for task in generate_instances(name, args.per_family, args.seed, split=split)  # type: ignore[arg-type]
        ]
        started = time.monotonic()
        generated = validate_tasks(instances, concurrency=args.concurrency)
        family_bad = _report("family instances", generated, time.monotonic() - started)
        manifest = validation_manifest(generated, f"families, {args.per_family} per family and split, seed {args.seed}")
        write_manifest(manifest, FAMILY_MANIFEST_PATH)
    return 1 if bad or family_bad else 0


def _validate_shipped(args: argparse.Namespace) -> list:
    """Validate the shipped tasks (or the ``--task`` ones) and rewrite their manifest entries; the bad ones."""
    tasks = read_tasks_csv(CSV_PATH).tasks
    if args.task:
        tasks = [t for t in tasks if t.task_id in set(args.task)]
    started = time.monotonic()
    shipped = validate_tasks(tasks, concurrency=args.concurrency)
    bad = _report("shipped tasks", shipped, time.monotonic() - started)
    manifest = validation_manifest(shipped, "dataset/latest_verified.csv")
    if args.task and MANIFEST_PATH.exists():
        # keep the other tasks' entries; drop entries of tasks no longer shipped
        old = json.loads(MANIFEST_PATH.read_text())
        order = [t.task_id for t in read_tasks_csv(CSV_PATH).tasks]
        entries = {**{k: v for k, v in old["tasks"].items() if k in order}, **manifest["tasks"]}
        entries = {task_id: entries[task_id] for task_id in order if task_id in entries}
        manifest["tasks"] = entries
        manifest["n_tasks"], manifest["n_ok"] = len(entries), sum(1 for v in entries.values() if v["ok"])
    write_manifest(manifest, MANIFEST_PATH)
    return bad


if __name__ == "__main__":
    sys.exit(main())
