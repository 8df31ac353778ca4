#!/usr/bin/env python3
"""Train with a preset: rLLM + verl on GPUs, or the local trainer on one machine.

    python training_scripts/launch_training.py --list
    python training_scripts/launch_training.py prod_32b_8_gpus --dry-run
    python training_scripts/launch_training.py prod_32b_8_gpus rollout.n=16 trainer.resume=disable
    python training_scripts/launch_training.py verl_1gpu actor_rollout_ref.actor.ppo_epochs=2 +ray_kwargs.ray_init.num_gpus=1

Overrides are dotted ``key=value`` on the preset, or raw rLLM/verl hydra keys (``+key=value`` adds
one); a key whose whole path is a preset key, or that lies in a section only the preset has, is a
preset key; the rest are hydra keys, composed after the preset's and checked against verl's schema
(see docs/training.md). Everything is validated before anything starts; a bad key, a bad value or an
impossible geometry exits with status 2 and one message naming the key, a missing package (or anything else
this machine lacks) with status 1 and one message naming what to install: every error of ours exits with
``errors.exit_code_for``'s status. For a ``backend: local`` preset the validation includes the local
trainer's own config, built as the launch builds it, and the verl-only keys it would ignore.
``--dry-run`` prints the resolved launch (secrets redacted; ``local_config`` for a local preset; for a
verl preset ``hydra_key_sources``: where each hydra key's value comes from) and saves it as
``<run dir>/launch/dry_run.yaml``. ``--rehearse`` runs a verl launch on a machine without GPUs or vLLM
up to its first GPU call (Ray, verl's validation, the parquet, the workers), to check an installation.
``--check-machine`` prints what a real launch of the preset here would still refuse (the NVIDIA driver, the GPUs
torch sees, the GPU packages and rLLM, padding-free attention, a sandbox backend), each with its fix, and exits 2
unless nothing (``terminal_agent.training.gpu_readiness``); the dry run ends with the same report, and a real launch
refuses those with exit 2 before Ray starts.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from pathlib import Path

if importlib.util.find_spec("terminal_agent") is None:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402
from rich.table import Table  # noqa: E402

from terminal_agent.errors import (  # noqa: E402
    USER_INPUT_ERRORS,
    ConfigError,
    TerminalAgentError,
    TrainingSetupError,
    exit_code_for,
)
from terminal_agent.training.gpu_readiness import ReadinessReport, machine_readiness  # noqa: E402
from terminal_agent.training.launcher import launch, plan_launch, write_dry_run  # noqa: E402
from terminal_agent.training.preset_config import load_preset, preset_names  # noqa: E402
from terminal_agent.training.trainer_backends import get_trainer_backend  # noqa: E402
from terminal_agent.training.verl.overrides import split_overrides  # noqa: E402

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


def level2_python(given: str | None) -> str | None:
    """The interpreter of level 2: ``--verl-python``, TERMINAL_AGENT_VERL_PYTHON, none where verl imports here
    (in-process), else the CI venv when it exists."""
    if given or os.environ.get("TERMINAL_AGENT_VERL_PYTHON"):
        return given or os.environ["TERMINAL_AGENT_VERL_PYTHON"]
    from terminal_agent.training.verl.schema import default_verl_python, verl_importable

    return None if verl_importable() else default_verl_python()


def dry_run_readiness(preset) -> ReadinessReport | None:
    """The machine report that ends a dry run; None (with a note) where it cannot be made: the dry run's own
    result and exit status stand either way."""
    try:
        return machine_readiness(preset)
    except (TerminalAgentError, ImportError, OSError) as exc:
        console.print(f"[yellow]note[/yellow] the machine was not checked: {escape(str(exc))}", highlight=False)
        return None


REHEARSAL_STOPPED = 3
"""Exit status of a rehearsal that stopped where the machine lacks something (a GPU, vLLM): its expected end."""


def rehearse(plan) -> int:
    """Run the verl launch without GPUs; print where it stopped (the last line of the innermost error)."""
    try:
        launch(plan, rehearse=True)
    except (*USER_INPUT_ERRORS, TrainingSetupError):
        raise
    except Exception as exc:  # noqa: BLE001 - the end of a rehearsal is whatever the first GPU call raises
        text = str(exc)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        tasks = re.findall(r"ray::[\w.]+\(\)", text)  # the Ray tasks it went through; the last one raised
        console.print(escape(text), highlight=False, soft_wrap=True)  # the remote traceback
        where = f" in {tasks[-1]}" if tasks else ""
        console.print(f"[yellow]rehearsal stopped[/yellow]{escape(where)} ({type(exc).__name__}): "
                      f"{escape(lines[-1] if lines else '')}", highlight=False, soft_wrap=True)
        return REHEARSAL_STOPPED
    console.print("[green]rehearsal ran to the end[/green] (this machine has what the run needs)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset", nargs="?", help="preset name or path to a preset YAML file")
    parser.add_argument("overrides", nargs="*",
                        help="dotted key=value overrides: preset keys (rollout.n=16) or rLLM/verl hydra keys "
                             "(actor_rollout_ref.rollout.enforce_eager=true, +key=value)")
    parser.add_argument("--dry-run", action="store_true", help="validate, print and save the launch; start nothing")
    parser.add_argument("--list", action="store_true", help="list the packaged presets")
    parser.add_argument("--rehearse", action="store_true",
                        help="verl preset on a machine without GPUs or vLLM: run the launch up to its first GPU call")
    parser.add_argument("--check-machine", action="store_true",
                        help="print what a real launch of the preset here would still refuse (driver, GPUs, packages, "
                             "sandboxes), each with its fix; exit 2 unless nothing")
    parser.add_argument("--verl-python", default=None,
                        help="interpreter with verl for level-2 validation (default: TERMINAL_AGENT_VERL_PYTHON, else "
                             "in-process where verl imports, else the venv of scripts/setup_verl_check_venv.sh)")
    parser.add_argument("--skip-level2", action="store_true", help="do not run verl's own validate_config (level 2)")
    args = parser.parse_intermixed_args(argv)  # options may follow the preset and its overrides
    if args.list:
        list_presets()
        return 0
    if not args.preset:
        parser.error("a preset is needed (--list shows them)")
    if args.rehearse and args.dry_run:
        parser.error("--rehearse runs the launch; --dry-run starts nothing: choose one")
    if args.check_machine and (args.rehearse or args.dry_run):
        parser.error("--check-machine checks this machine only; --dry-run ends with the same report")
    try:
        if args.check_machine:
            report = machine_readiness(load_preset(args.preset, split_overrides(args.overrides)[0]))
            print("\n".join(report.lines()))
            return 0 if report.ready else 2
        with console.status("validating the preset ..."):
            preset_keys, raw_keys = split_overrides(args.overrides)
            plan = plan_launch(load_preset(args.preset, preset_keys), raw_overrides=raw_keys,
                               level2=not args.skip_level2, verl_python=level2_python(args.verl_python))
        for note in plan.notes:
            console.print(f"[yellow]note[/yellow] {escape(note)}", highlight=False)
        if args.dry_run:
            text, path = write_dry_run(plan)
            print(text, end="")
            console.print(f"[green]valid[/green]; resolved launch saved to {escape(str(path))} (nothing started)")
            report = dry_run_readiness(plan.preset)
            if report is not None:
                console.print(escape("\n".join(report.lines())), highlight=False, soft_wrap=True)
            return 0
        backend = get_trainer_backend(plan.preset.backend)
        if args.rehearse and not backend.can_rehearse:
            raise ConfigError(f"--rehearse: preset {plan.preset.name!r} is backend {plan.preset.backend}; a rehearsal "
                              "is a verl launch without GPUs")
        console.print(f"[green]valid[/green]; launching {escape(plan.preset.name)} into {escape(str(plan.run_dir))}")
        if backend.in_process:  # the in-process trainer is quiet; the progress bars and summary are this CLI's
            from terminal_agent.cli.local_training_view import RichTrainingProgress, print_training_summary

            steps, episodes_per_step = backend.progress_totals(plan)
            with RichTrainingProgress(steps=steps, episodes_per_step=episodes_per_step) as view:
                summary = launch(plan, progress=view)
            print_training_summary(summary)
        elif args.rehearse:
            return rehearse(plan)
        else:
            launch(plan)
    except TerminalAgentError as exc:  # bad input (a preset, its tasks): 2; this machine, a failed run: 1
        console.print(f"[red]error[/red]: {escape(str(exc))}", highlight=False, soft_wrap=True)
        return exit_code_for(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
