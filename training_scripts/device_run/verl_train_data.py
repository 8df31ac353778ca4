#!/usr/bin/env python3
"""The train (and validation) parquet of a verl run on the frozen splits, limited to what an export holds.

    python training_scripts/device_run/verl_train_data.py -o DATA_DIR [--images-dir EXPORT] [--splits FILE]
        [--val-tasks N]

The same tasks as the local trainer's device runs (``train_steps.py --only-exported``): the frozen train
split, shipped tasks checked against their pinned validation and family instances regenerated, kept only
where the bwrap export (``--images-dir`` or ``TERMINAL_AGENT_IMAGES_DIR``) has the image. ``train.parquet``
holds them in the split's order; ``val.parquet`` the first ``--val-tasks`` of them (verl needs a validation
file even when ``trainer.test_freq=-1``). Rows are the project's parquet rows
(:func:`terminal_agent.tasks.parquet.rows.write_parquet`), which the Workflow reads back as tasks. Prints
``data.train_files=... data.val_files=...`` for the launcher.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--out", required=True, help="folder for train.parquet and val.parquet")
    parser.add_argument("--splits", default="dataset/splits/splits.json")
    parser.add_argument("--tasks", default=None, help="where shipped tasks are looked up (default dataset/latest_verified.csv)")
    parser.add_argument("--images-dir", default=None, help="the bwrap export (default TERMINAL_AGENT_IMAGES_DIR)")
    parser.add_argument("--val-tasks", type=int, default=8)
    args = parser.parse_args(argv)

    from terminal_agent.errors import ConfigError
    from terminal_agent.tasks.parquet.rows import write_parquet
    from terminal_agent.training.train_splits import DEFAULT_SHIPPED, exported_only, frozen_splits

    try:
        train, _held_out = frozen_splits(args.splits, args.tasks or DEFAULT_SHIPPED)
        images_dir = args.images_dir or os.environ.get("TERMINAL_AGENT_IMAGES_DIR")
        if images_dir:
            train = exported_only(train, images_dir)
        if not train:
            raise ConfigError("no train task left: the export holds none of the train split")
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    train_path = write_parquet(train, out / "train.parquet", split="train")
    val_path = write_parquet(train[: args.val_tasks], out / "val.parquet", split="test")
    print(f"{len(train)} train tasks, {min(len(train), args.val_tasks)} validation tasks", file=sys.stderr)
    print(f"data.train_files={train_path} data.val_files={val_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
