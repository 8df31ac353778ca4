#!/usr/bin/env python3
"""GRPO steps of a local preset on the frozen train split, with no evaluation: a speed run.

    python training_scripts/device_run/train_steps.py local_1gpu --out RUN_DIR \
        [--splits dataset/splits/splits.json] [--limit-train N] [--only-exported] [key=value ...]

The same trainer (``train_local``), tasks (``frozen_splits``: shipped tasks checked against their pinned
validation, family instances regenerated) and overrides as ``local_learning_experiment.py``, without the
held-out evaluations that the speed measurement does not need. ``--only-exported`` keeps the train tasks
that the bwrap export (``sandbox.bwrap.images_dir`` or ``TERMINAL_AGENT_IMAGES_DIR``) holds, so a partial
export does not cost a step its episodes. RUN_DIR gets ``metrics.jsonl``, the checkpoints, ``curves.png``
and ``summary.json``; the step-time summary (``summarize_step_times.py``) is printed at the end. Run it
again on the same RUN_DIR to resume after the latest checkpoint.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402

from terminal_agent.errors import ConfigError  # noqa: E402

console = Console(stderr=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset", help="a backend: local preset (name or YAML path)")
    parser.add_argument("overrides", nargs="*", help="dotted key=value preset overrides (e.g. local.steps=20)")
    parser.add_argument("--out", required=True, help="run directory (resumed when it holds a checkpoint)")
    parser.add_argument("--splits", default="dataset/splits/splits.json", help="the frozen splits file")
    parser.add_argument("--tasks", default=None, help="where shipped tasks are looked up (default dataset/latest_verified.csv)")
    parser.add_argument("--limit-train", type=int, default=None, help="only the first N train tasks (after --only-exported)")
    parser.add_argument("--only-exported", action="store_true", help="only train tasks the bwrap export holds")
    args = parser.parse_intermixed_args(argv)

    from summarize_step_times import format_summary, read_step_records, summarize

    from terminal_agent.cli.local_training_view import RichTrainingProgress, print_training_summary
    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.local.trainer import train_local
    from terminal_agent.training.preset_config import load_preset
    from terminal_agent.training.train_splits import DEFAULT_SHIPPED, exported_only, frozen_splits
    from terminal_agent.training.trainer_backends import get_trainer_backend

    started = time.monotonic()
    try:
        preset = load_preset(args.preset, args.overrides)
        if not get_trainer_backend(preset.backend).in_process:
            raise ConfigError(f"preset {preset.name!r} is a {preset.backend} preset; this runs the local trainer")
        config = LocalTrainingConfig.from_preset(preset)
        train, _held_out = frozen_splits(args.splits, args.tasks or DEFAULT_SHIPPED)
        if args.only_exported:
            images_dir = config.episode.env.sandbox.bwrap.images_dir or os.environ.get("TERMINAL_AGENT_IMAGES_DIR")
            train = exported_only(train, images_dir)
        if args.limit_train is not None:
            train = train[: args.limit_train]
        if not train:
            raise ConfigError("no train task left (check --only-exported and --limit-train)")
    except ConfigError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    out = Path(args.out)
    console.print(f"{config.steps} GRPO steps of {config.tasks_per_step} tasks x {config.group_size} episodes on "
                  f"{len(train)} train tasks, sandbox {config.episode.env.sandbox.backend}, "
                  f"{config.device} {config.dtype} "
                  f"-> {escape(str(out))} (set up in {time.monotonic() - started:.1f} s)")
    with RichTrainingProgress(steps=config.steps, episodes_per_step=config.tasks_per_step * config.group_size,
                              out=console) as view:
        summary = train_local(config, train, out, progress=view)
    print_training_summary(summary, console)
    record = {
        "preset": preset.name, "overrides": list(args.overrides), "train_tasks": len(train),
        "steps": summary.steps, "steps_this_session": summary.steps_this_session, "resumed_from": summary.resumed_from,
        "optimizer_steps": summary.optimizer_steps,
        "skipped_optimizer_steps": getattr(summary, "skipped_optimizer_steps", None), "samples_trained": summary.samples_trained,
        "groups_dropped": summary.groups_dropped, "masked_infrastructure": summary.masked_infrastructure,
        "skipped_tasks": summary.skipped_tasks, "sft": summary.sft, "trainer_wall_s": summary.wall_s,
        "script_wall_s": time.monotonic() - started,
        "step_times": summarize(read_step_records(summary.metrics_path)),
    }
    (out / "summary.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    print(format_summary(record["step_times"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
