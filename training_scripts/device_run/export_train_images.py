#!/usr/bin/env python3
"""Export the images of the frozen train split (and, with --held-out, the held-out split), for the bwrap backend.

    python training_scripts/device_run/export_train_images.py -o EXPORT_DIR [--splits dataset/splits/splits.json]
        [--shipped M] [--per-family N]

``terminal-agent images export --splits`` writes every split (train, held_out, held_out_keys); a speed
run on the device trains on the train split alone, so this writes only those images. A smaller export
for a link with a size limit: ``--shipped M`` keeps the first M shipped train tasks and ``--per-family N``
the first N train instances of each family (the split's own order). Needs Docker. The manifest is written
at the end, so an interrupted export leaves no new tasks usable (its layer files are reused next time).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def subset(tasks: list, *, shipped: int | None, per_family: int | None) -> list:
    """The first ``shipped`` shipped tasks and the first ``per_family`` instances of each family (None: all)."""
    kept: list = []
    seen: dict[str, int] = {}
    for task in tasks:
        kind = task.metadata.get("family") or ""
        limit = per_family if kind else shipped
        if limit is None or seen.get(kind, 0) < limit:
            kept.append(task)
            seen[kind] = seen.get(kind, 0) + 1
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, help="export directory (created; an existing one is extended)")
    parser.add_argument("--splits", default="dataset/splits/splits.json", help="the frozen splits file")
    parser.add_argument("--tasks", default="dataset/latest_verified.csv", help="where the shipped tasks are looked up")
    parser.add_argument("--shipped", type=int, default=None, help="only the first M shipped train tasks")
    parser.add_argument("--per-family", type=int, default=None, help="only the first N train instances of each family")
    parser.add_argument("--held-out", action="store_true", help="also every task of the held-out split (for the "
                        "learning experiment's evaluations on the node)")
    args = parser.parse_args(argv)

    from terminal_agent.sandbox.images.export import export_images
    from terminal_agent.training.train_splits import frozen_splits

    train, held_out = frozen_splits(args.splits, args.tasks)
    train = subset(train, shipped=args.shipped, per_family=args.per_family)
    if args.held_out:
        train = train + list(held_out)
    started = time.monotonic()
    report = export_images(train, args.output, progress=lambda line: print(line, flush=True))
    print(f"{len(report.images)} train task image(s) exported to {args.output} in {time.monotonic() - started:.1f} s: "
          f"{report.layers_written} new layer(s), {report.bytes_written / 1e6:.1f} MB written", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
