"""The local trainer's console view: a progress bar per step (rollouts, update) and a summary table.

The trainer library reports through :class:`terminal_agent.training.local.trainer.TrainingProgress`;
this module is the rich implementation the launcher uses.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

console = Console(stderr=True)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


class RichTrainingProgress:
    """``with RichTrainingProgress(...) as view: train_local(..., progress=view)``."""

    def __init__(self, *, steps: int, episodes_per_step: int, out: Console | None = None, progress: Progress | None = None):
        """``progress``: draw into an already-running rich Progress (one live display for several phases)."""
        self.steps = steps
        self.episodes_per_step = episodes_per_step
        self.console = out or console
        self._owned = progress is None
        self._progress = progress or Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
        )
        self._bars: dict[tuple[int, str], Any] = {}

    def __enter__(self) -> "RichTrainingProgress":
        if self._owned:
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._owned:
            self._progress.__exit__(*exc)

    def run_started(self, first_step: int, last_step: int, resumed_from: int | None) -> None:
        where = f" (resumed after step {resumed_from})" if resumed_from else ""
        self._progress.console.print(f"[bold]local GRPO[/]: steps {first_step}..{last_step}{where}")

    def phase_started(self, step: int, phase: str, total: int) -> None:
        label = f"step {step}/{self.steps} {phase}" if step else phase
        self._bars[(step, phase)] = self._progress.add_task(escape(label), total=total)

    def phase_advanced(self, step: int, phase: str, done: int) -> None:
        bar = self._bars.get((step, phase))
        if bar is not None:
            self._progress.update(bar, completed=done)

    def step_finished(self, step: int, metrics: dict[str, Any]) -> None:
        self._progress.console.print(
            f"step {step}: reward {_fmt(metrics.get('rollout/reward_mean'))} ± {_fmt(metrics.get('rollout/reward_std'))}, "
            f"pass {_fmt(metrics.get('rollout/pass_rate'), 2)}, groups kept {metrics.get('batch/groups_kept')}/"
            f"{metrics.get('batch/groups')}, trained tokens {metrics.get('update/trained_tokens')}, "
            f"rollouts {_fmt(metrics.get('time/rollout_wall_s'), 1)} s, update {_fmt(metrics.get('time/update_s'), 1)} s"
        )

    def message(self, text: str) -> None:
        self._progress.console.print(escape(text))


def print_training_summary(summary: Any, out: Console | None = None) -> None:
    """The end-of-run table of a :class:`~terminal_agent.training.local.trainer.TrainingSummary`."""
    target = out or console
    table = Table(title="local training summary", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    rows = [
        ("run directory", str(summary.run_dir)),
        ("steps (this session)", f"{summary.steps} ({summary.steps_this_session})"),
        ("resumed after step", _fmt(summary.resumed_from)),
        ("optimizer steps", str(summary.optimizer_steps)),
        ("skipped optimizer steps (non-finite gradient)", str(summary.skipped_optimizer_steps)),
        ("samples trained", str(summary.samples_trained)),
        ("groups dropped", str(summary.groups_dropped)),
        ("infrastructure-masked samples", str(summary.masked_infrastructure)),
        ("reward mean, first -> last step", f"{_fmt(summary.first_reward_mean)} -> {_fmt(summary.last_reward_mean)}"),
        ("skipped tasks", ", ".join(summary.skipped_tasks) or "-"),
        ("SFT warm start", "-" if not summary.sft else f"{len(summary.sft['tasks_used'])} transcripts, losses {summary.sft['epoch_losses']}"),
        ("checkpoint", str(summary.checkpoint) if summary.checkpoint else "-"),
        ("metrics", str(summary.metrics_path)),
        ("curves", str(summary.curves_path) if summary.curves_path else "-"),
        ("wandb (offline)", str(summary.wandb_dir) if summary.wandb_dir else "-"),
        ("wall time", f"{summary.wall_s:.0f} s"),
    ]
    for what, value in rows:
        table.add_row(what, escape(value))
    target.print(table)


__all__ = ["RichTrainingProgress", "print_training_summary"]
