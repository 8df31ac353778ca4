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

from terminal_agent.errors import ConfigError
from terminal_agent.task_quality.splits import freeze_splits, write_splits
from terminal_agent.tasks.csv.format import read_tasks_csv

SPLITS_PATH = HERE / "splits" / "splits.json"


def bands_from_screening(summary: dict, how: str | None) -> dict:
    """Which model screened, and per task id: passes of k, the reward spread (mean, std, min, max), whether
    the group is all-equal (no GRPO signal) and the band (below / inside / above / incomplete); over all
    complete groups the share of all-equal ones."""
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
            # summaries written before the spread existed lack these keys
            "reward_std": row.get("reward_std"),
            "reward_min": row.get("reward_min"),
            "reward_max": row.get("reward_max"),
            "all_equal": row.get("all_equal"),
            "band": band,
            "hashes": row["hashes"],
        }
    complete = [b for b in bands.values() if b["all_equal"] is not None]
    n_equal = sum(1 for b in complete if b["all_equal"])
    return {
        "model": summary["model"],
        "screened_at": summary.get("created_at"),
        "k": summary["attempts"],
        "band": summary["band"],
        "how": how,
        "n_all_equal": n_equal,
        "n_complete": len(complete),
        "share_all_equal": n_equal / len(complete) if complete else None,
        "tasks": bands,
    }


def committed_family_seeds(path: Path, seed: int) -> dict[str, int]:
    """The per-family seeds of the committed splits file that differ from ``seed`` (a refreeze keeps them)."""
    if not path.exists():
        return {}
    document = json.loads(path.read_text())
    return {name: spec["seed"] for part in document["splits"].values() for name, spec in part["families"].items()
            if spec.get("seed", seed) != seed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--screening", type=Path, help="output directory of `terminal-agent tasks screen`")
    parser.add_argument("--how", help="what was screened and with which settings (recorded with the bands)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--family-count", type=int, default=20,
                        help="train instances per train family (held-out keys: a quarter)")
    parser.add_argument("--held-out-family-count", type=int, default=10, help="instances per held-out family")
    parser.add_argument("--keep-bands", action="store_true",
                        help="keep the screening bands of the committed splits file (when --screening is not given)")
    parser.add_argument("--family-seed", action="append", default=[], metavar="FAMILY=SEED",
                        help="another seed for one family's instances (repeatable); the committed file's own "
                             "per-family seeds are kept unless named again")
    args = parser.parse_args(argv)
    tasks = read_tasks_csv(HERE / "latest_verified.csv").tasks
    bands = None
    if args.screening:
        bands = bands_from_screening(json.loads((args.screening / "screening.json").read_text()), args.how)
    elif args.keep_bands and SPLITS_PATH.exists():
        bands = json.loads(SPLITS_PATH.read_text()).get("bands")
    try:
        family_seeds = committed_family_seeds(SPLITS_PATH, args.seed)
        for item in args.family_seed:
            name, sep, value = item.partition("=")
            if not sep or not value.strip().lstrip("-").isdigit():
                raise ConfigError(f"--family-seed {item!r}: expected FAMILY=SEED, e.g. git-recover=2")
            family_seeds[name.strip()] = int(value)
        document = freeze_splits(tasks, seed=args.seed, family_count=args.family_count,
                                 held_out_family_count=args.held_out_family_count, bands=bands,
                                 family_seeds=family_seeds)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_splits(document, SPLITS_PATH)
    for name, part in document["splits"].items():
        instances = sum(len(spec["instances"]) for spec in part["families"].values())
        print(f"{name}: {len(part['task_ids'])} shipped tasks, {len(part['families'])} families ({instances} instances); "
              f"difficulty {document['difficulty'][name]}")
    print("closest held-out / train pairs (mean TF-IDF cosine over prompt, files, solution; near-twin at "
          f"{document['near_twin_check']['threshold']}):")
    for pair in document["near_twin_check"]["closest"][:10]:
        print(f"  {pair['score']:.3f}  {pair['held_out']}  ~  {pair['train']}")
    print(f"screened_by {document['screened_by']}; content_sha256 {document['content_sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
