#!/usr/bin/env python3
"""Does local GRPO learn? Train on a train split, then evaluate base vs trained on held-out tasks.

    python training_scripts/local_learning_experiment.py local_cpu_smoke --tasks dataset/latest_verified.csv
    python training_scripts/local_learning_experiment.py local_cpu_smoke --tasks train_dir --held-out test_dir local.steps=20

    python training_scripts/local_learning_experiment.py local_1gpu --splits dataset/splits/splits.json \
        sandbox.backend=bwrap      # the frozen train / held-out splits (shipped tasks + family instances)

    python training_scripts/local_learning_experiment.py local_1gpu --splits dataset/splits/splits.json \
        --seeds 0,1,2 sandbox.backend=bwrap   # once per seed in OUT/seed_N, then OUT/pooled.md over the seeds

Without --held-out or --splits the preset's data.val_fraction / data.split_seed split --tasks by task id hash.
Writes OUT/train (the run), OUT/eval_base and OUT/eval_trained (results.json each), OUT/comparison.md
(``eval compare``'s paired bootstrap, on reward and on pass rate) and prints the comparison.
With --seeds, each seed's experiment goes to OUT/seed_N (a seed already finished there is skipped, so a
later ``--seeds 3`` adds seed 3), and OUT/pooled.md / pooled.json pool every finished seed directory.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: E402

from terminal_agent.errors import ConfigError  # noqa: E402

console = Console(stderr=True)


def sample_tasks(tasks: list, limit: int | None) -> list:
    """``limit`` of ``tasks`` (a sample seeded by 0, in the original order), or all of them."""
    if limit is None or limit >= len(tasks):
        return tasks
    if limit < 1:
        raise ConfigError(f"a task limit must be at least 1, got {limit}")
    keep = set(random.Random(0).sample(range(len(tasks)), limit))
    return [task for i, task in enumerate(tasks) if i in keep]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset", nargs="?", default="local_cpu_smoke", help="a backend: local preset (name or YAML path)")
    parser.add_argument("overrides", nargs="*", help="dotted key=value preset overrides (e.g. local.steps=20)")
    parser.add_argument("--tasks", default=None, help="task source (CSV, task dir, dir of task dirs); default: the preset's data.tasks")
    parser.add_argument("--held-out", default=None, help="a separate held-out task source (else a hash split of --tasks)")
    parser.add_argument("--splits", default=None, help="a frozen splits file (dataset/splits/splits.json): its train and "
                        "held_out splits, shipped tasks looked up in --tasks (default dataset/latest_verified.csv)")
    parser.add_argument("--limit-train", type=int, default=None, help="use only N train tasks (a seeded sample), for a quick try")
    parser.add_argument("--limit-held-out", type=int, default=None, help="evaluate only N held-out tasks (a seeded sample)")
    parser.add_argument("--out", default=None, help="output directory (default: <trainer.output_dir>/<experiment>-experiment)")
    parser.add_argument("--eval-attempts", type=int, default=4, help="attempts per held-out task for each model")
    parser.add_argument("--eval-temperature", type=float, default=0.6, help="sampling temperature of the evaluations")
    parser.add_argument("--eval-concurrency", type=int, default=4, help="evaluation episodes at once")
    parser.add_argument("--only-exported", action="store_true", help="keep only the train and held-out tasks that the "
                        "bwrap export holds (sandbox.bwrap.images_dir or TERMINAL_AGENT_IMAGES_DIR): a partial export")
    parser.add_argument("--seeds", default=None, help="run once per seed (e.g. 0,1,2; replaces local.seed), each in "
                        "OUT/seed_N, skipping seeds finished there; OUT/pooled.md pools every finished seed")
    args = parser.parse_intermixed_args(argv)

    from terminal_agent.cli.local_training_view import RichTrainingProgress, print_training_summary
    from terminal_agent.training.experiments.local_experiment import run_learning_experiment
    from terminal_agent.training.experiments.seed_experiment import check_task_groups, parse_seeds, run_seed_experiments
    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.preset_config import load_preset
    from terminal_agent.training.train_splits import DEFAULT_SHIPPED, exported_only, frozen_splits, split_sources
    from terminal_agent.training.trainer_backends import get_trainer_backend

    try:
        seeds = parse_seeds(args.seeds) if args.seeds is not None else None
        if seeds is not None and any(o.split("=", 1)[0].strip() == "local.seed" for o in args.overrides):
            raise ConfigError("--seeds and local.seed both set the seed: pass the seeds with --seeds")
        preset = load_preset(args.preset, args.overrides)
        if not get_trainer_backend(preset.backend).in_process:
            raise ConfigError(f"preset {preset.name!r} is a {preset.backend} preset; the experiment runs the local trainer")
        config = LocalTrainingConfig.from_preset(preset)
        if args.splits is not None:
            if args.held_out is not None:
                raise ConfigError("--splits and --held-out both name the held-out tasks: pass one")
            train, held_out = frozen_splits(args.splits, args.tasks or DEFAULT_SHIPPED)
        else:
            source = args.tasks or preset.data.tasks
            if source is None:
                raise ConfigError("no task source: pass --tasks")
            train, held_out = split_sources(source, args.held_out, val_fraction=max(preset.data.val_fraction, 0.0),
                                            split_seed=preset.data.split_seed)
        if args.only_exported:
            images_dir = config.episode.env.sandbox.bwrap.images_dir or os.environ.get("TERMINAL_AGENT_IMAGES_DIR")
            train, held_out = exported_only(train, images_dir), exported_only(held_out, images_dir)
        train, held_out = sample_tasks(train, args.limit_train), sample_tasks(held_out, args.limit_held_out)
        if seeds is not None:
            check_task_groups(held_out)
    except ConfigError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    out = Path(args.out) if args.out else Path(preset.trainer.output_dir) / f"{preset.experiment}-experiment"
    console.print(f"train on {len(train)} tasks, evaluate on {len(held_out)} held-out tasks "
                  f"({args.eval_attempts} attempts each)"
                  f"{f', seeds {args.seeds}' if seeds is not None else ''} -> {escape(str(out))}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console) as bars:
        evals: dict[str, int] = {}

        def on_eval(done: int, total: int, trial) -> None:  # noqa: ANN001
            key = "eval"
            if key not in evals or bars.tasks[evals[key]].finished:
                evals[key] = bars.add_task("held-out evaluation", total=total)
            bars.update(evals[key], completed=done)

        view = RichTrainingProgress(steps=config.steps, episodes_per_step=config.tasks_per_step * config.group_size,
                                    out=console, progress=bars)
        evaluation = dict(eval_attempts=args.eval_attempts, eval_temperature=args.eval_temperature,
                          eval_concurrency=args.eval_concurrency, progress=view, on_eval_progress=on_eval)
        if seeds is None:
            result = run_learning_experiment(config, train, held_out, out, **evaluation)
        else:
            outcome = run_seed_experiments(config, train, held_out, out, seeds=seeds, **evaluation)
    if seeds is None:
        print_training_summary(result.training, console)
        Console().print(result.markdown)
        return 0
    for seed, experiment in outcome.experiments.items():
        console.print(f"[bold]seed {seed}[/]")
        print_training_summary(experiment.training, console)
    for seed, differences in outcome.skipped.items():
        for key, values in differences.items():
            console.print(f"[yellow]warning:[/] seed {seed} (skipped, finished earlier) ran with {escape(key)} = "
                          f"{escape(repr(values.get('recorded')))}, this run asks for {escape(repr(values.get('now')))}")
    Console().print(outcome.pooled.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
