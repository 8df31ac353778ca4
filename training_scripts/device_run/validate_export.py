#!/usr/bin/env python3
"""Validate the frozen splits' tasks in bwrap, from an image export: is a zero the model's or the harness's?

    python training_scripts/device_run/validate_export.py --export EXPORT_DIR [--split held_out|train|all]
        [--splits dataset/splits/splits.json] [--bundle .device_carry/bundle.json] [-c 8] [-o OUT]

Each task of the split that the export holds runs three scripted episodes in bwrap sandboxes made from the
export (``terminal-agent tasks validate``'s no-work rule): its reference solution must score 1.0, a no-op
agent at most 0.05, empty outputs no more than the no-op. An evaluation in which every model scores 0 then
rests on tasks that can be solved in the very sandboxes it ran in. ``--bundle`` keeps only the tasks of a
device bundle (``bundle.py pack`` leaves out tasks with big layers, which the export here still holds).
Needs bubblewrap, not Docker, so it runs on the GPU node too. Exits 1 when a task is invalid.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

SPLITS = ("train", "held_out", "all")


def bundle_dropped_task_ids(bundle: Path) -> set[str]:
    """The task ids a device bundle left out of its export (``bundle.json``'s ``dropped_tasks_big_layer``)."""
    from terminal_agent.errors import ConfigError

    try:
        recorded = json.loads(bundle.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{bundle}: not a readable bundle.json ({exc})") from exc
    dropped = recorded.get("dropped_tasks_big_layer") if isinstance(recorded, dict) else None
    if not isinstance(dropped, list) or not all(isinstance(t, str) for t in dropped):
        raise ConfigError(f"{bundle}: no 'dropped_tasks_big_layer' list of task ids (is it bundle.py pack's bundle.json?)")
    return set(dropped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", required=True, type=Path, help="the bwrap image export (export_train_images.py -o)")
    parser.add_argument("--split", choices=SPLITS, default="held_out", help="which split's tasks (default held_out)")
    parser.add_argument("--splits", default="dataset/splits/splits.json", help="the frozen splits file")
    parser.add_argument("--bundle", type=Path, default=None, help="leave out the tasks this bundle.json dropped")
    parser.add_argument("-c", "--concurrency", type=int, default=4, help="episodes at once (default 4)")
    parser.add_argument("-o", "--output-dir", type=Path, default=Path("runs/validate_export"),
                        help="episode results, transcripts and validation.json")
    args = parser.parse_args(argv)

    from terminal_agent.errors import ConfigError
    from terminal_agent.sandbox.bwrap.settings import BwrapConfig
    from terminal_agent.sandbox.config import SandboxConfig
    from terminal_agent.task_quality.validation import validate_tasks, validation_manifest, write_manifest
    from terminal_agent.training.train_splits import DEFAULT_SHIPPED, exported_only, frozen_splits

    try:
        train, held_out = frozen_splits(args.splits, DEFAULT_SHIPPED)
        tasks = {"train": train, "held_out": held_out, "all": train + held_out}[args.split]
        tasks = exported_only(tasks, args.export)
        if args.bundle is not None:
            dropped = bundle_dropped_task_ids(args.bundle)
            tasks = [t for t in tasks if t.task_id not in dropped]
        if not tasks:
            raise ConfigError(f"no {args.split} task of {args.splits} is in the export {args.export}"
                              + (f" and the bundle {args.bundle}" if args.bundle else ""))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sandbox = SandboxConfig(backend="bwrap", bwrap=BwrapConfig(images_dir=str(args.export)))
    print(f"validating {len(tasks)} {args.split} task(s) in bwrap from {args.export}", file=sys.stderr)
    validations = validate_tasks(tasks, concurrency=args.concurrency, output_dir=args.output_dir, sandbox=sandbox)
    bad = [v for v in validations if not v.ok]
    for v in bad:
        print(f"{v.task_id}: oracle {v.oracle_score}, no-op {v.noop_score}, empty {v.empty_score}: "
              f"{'; '.join(v.problems + v.infrastructure_errors)}")
    path = write_manifest(validation_manifest(validations, args.splits), args.output_dir / "validation.json")
    oracle = [v.oracle_score for v in validations if v.oracle_score is not None]
    print(f"{len(validations) - len(bad)}/{len(validations)} valid in bwrap; reference solutions scored 1.0 on "
          f"{sum(score == 1.0 for score in oracle)} of {len(oracle)}; manifest: {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
