#!/usr/bin/env python3
"""Freeze the train / held-out splits (dataset/splits/splits.json), with screening bands when given.

    python dataset/freeze_splits.py                                  # splits only
    python dataset/freeze_splits.py --screening runs/screening       # + the bands of a `tasks screen` run

The splits hold every shipped task (by a hash of seed and id, 20% held out) and, per family, the
keys, seed and count of its generated instances (held-out instances use only held-out keys).
A trainer resolves a split with ``terminal_agent.task_quality.splits.resolve_split``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from _dataset_scripts import HERE  # first: makes terminal_agent importable from a bare checkout

from terminal_agent.task_quality.splits import freeze_splits, write_splits
from terminal_agent.tasks.csv_format import read_tasks_csv

SPLITS_PATH = HERE / "splits" / "splits.json"


def bands_from_screening(summary: dict, how: str | None) -> dict:
    """task id -> passes of k, mean reward and the band (never / sometimes / always / incomplete)."""
    low, high = summary["band"]
    bands = {}
    for row in summary["tasks"]:
        if not row["complete"]:
            band = "incomplete"
        elif row["passes"] < low:
            band = "below"
        elif row["passes"] > high:
            band = "above"
        else:
            band = "inside"
        bands[row["task_id"]] = {
            "passes": row["passes"],
            "attempts": row["attempts"],
            "errors": row["errors"],
            "mean_reward": row["mean_reward"],
            "band": band,
            "hashes": row["hashes"],
        }
    return {
        "model": summary["model"],
        "k": summary["attempts"],
        "band": summary["band"],
        "how": how,
        "tasks": bands,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--screening", type=Path, help="output directory of `terminal-agent tasks screen`")
    parser.add_argument("--how", help="what was screened and with which settings (recorded with the bands)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--held-out", type=float, default=0.2)
    parser.add_argument("--family-count", type=int, default=20, help="train instances per family (held-out: a quarter)")
    args = parser.parse_args(argv)
    tasks = read_tasks_csv(HERE / "latest_verified.csv").tasks
    bands = None
    if args.screening:
        bands = bands_from_screening(json.loads((args.screening / "screening.json").read_text()), args.how)
    document = freeze_splits(tasks, held_out_fraction=args.held_out, seed=args.seed, family_count=args.family_count,
                             bands=bands)
    write_splits(document, SPLITS_PATH)
    train, held = document["splits"]["train"], document["splits"]["held_out"]
    print(f"train: {len(train['task_ids'])} tasks + families; held_out: {len(held['task_ids'])} tasks + families; "
          f"content_sha256 {document['content_sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
