#!/usr/bin/env python3
"""Train with a preset: rLLM + verl on GPUs, or the local trainer on one machine.

    python training_scripts/launch_training.py --list
    python training_scripts/launch_training.py prod_32b_8_gpus --dry-run
    python training_scripts/launch_training.py prod_32b_8_gpus rollout.n=16 trainer.resume=disable

Overrides are dotted ``key=value`` on the preset (see docs/training.md). Everything is validated
before anything starts; a bad key, a bad value, a missing package or an impossible geometry exits
with status 2 and one message naming the key. For a ``backend: local`` preset that includes the
local trainer's own config, built as the launch builds it, and the verl-only keys it would ignore.
``--dry-run`` prints the resolved launch (secrets redacted; ``local_config`` for a local preset) and
saves it as ``<run dir>/launch/dry_run.yaml``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402
from rich.table import Table  # noqa: E402

from terminal_agent.errors import USER_INPUT_ERRORS, TrainingSetupError  # noqa: E402
from terminal_agent.training.launcher import launch, plan_launch, write_dry_run  # noqa: E402
from terminal_agent.training.preset_config import load_preset, preset_names  # noqa: E402

console = Console(stderr=True)


def list_presets() -> None:
    table = Table()
    table.add_column("preset", no_wrap=True)
    table.add_column("backend")
    table.add_column("model", no_wrap=True)
    table.add_column("nodes x GPUs")
    table.add_column("description")
    for name in preset_names():
        preset = load_preset(name)
        table.add_row(name, preset.backend, preset.model.path,
                      f"{preset.cluster.nodes} x {preset.cluster.gpus_per_node}", escape(preset.description))
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset", nargs="?", help="preset name or path to a preset YAML file")
    parser.add_argument("overrides", nargs="*", help="dotted key=value overrides (e.g. rollout.n=16)")
    parser.add_argument("--dry-run", action="store_true", help="validate, print and save the launch; start nothing")
    parser.add_argument("--list", action="store_true", help="list the packaged presets")
    parser.add_argument("--verl-python", default=None,
                        help="interpreter with verl for level-2 validation (default: in-process where verl imports)")
    args = parser.parse_intermixed_args(argv)  # options may follow the preset and its overrides
    if args.list:
        list_presets()
        return 0
    if not args.preset:
        parser.error("a preset is needed (--list shows them)")
    try:
        with console.status("validating the preset ..."):
            plan = plan_launch(load_preset(args.preset, args.overrides), verl_python=args.verl_python)
        for note in plan.notes:
            console.print(f"[yellow]note[/yellow] {escape(note)}", highlight=False)
        if args.dry_run:
            text, path = write_dry_run(plan)
            print(text, end="")
            console.print(f"[green]valid[/green]; resolved launch saved to {escape(str(path))} (nothing started)")
            return 0
        console.print(f"[green]valid[/green]; launching {escape(plan.preset.name)} into {escape(str(plan.run_dir))}")
        if plan.preset.backend == "local":  # the local trainer is quiet; the progress bars and summary are this CLI's
            from terminal_agent.cli.local_training_view import RichTrainingProgress, print_training_summary

            config = plan.local_config
            with RichTrainingProgress(steps=config.steps, episodes_per_step=config.tasks_per_step * config.group_size) as view:
                summary = launch(plan, progress=view)
            print_training_summary(summary)
        else:
            launch(plan)
    except (*USER_INPUT_ERRORS, TrainingSetupError) as exc:  # bad input (a preset, its tasks) or this machine
        console.print(f"[red]error[/red]: {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
