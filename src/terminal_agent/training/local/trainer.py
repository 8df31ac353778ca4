"""The single-machine GRPO trainer: rollouts through the real agent/env/grader, LoRA updates, checkpoints.

One step: draw ``tasks_per_step`` train tasks (seeded order, see :class:`TaskOrder`), run
``group_size`` episodes of each with the current policy (:mod:`.rollouts`), select the
trainable samples (:mod:`..algorithms.group_selection`), compute GRPO advantages and take one
optimizer step (:mod:`.update`), log the step (:mod:`.metrics`) and checkpoint it
(:mod:`.checkpoints`). A run restarted on the same run directory resumes after its last
checkpoint: same adapter, optimizer, RNG and data order. Like every run, it sweeps what dead runs leaked
(:class:`~terminal_agent.rollout.episode_batch.LeakSweeper`) when it starts and while it lasts.

The library is quiet: progress goes to an optional :class:`TrainingProgress` (the CLI's rich view
implements it), messages to ``logging``.
"""

from __future__ import annotations

import dataclasses

import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from terminal_agent.errors import ConfigError
from terminal_agent.evaluation.results import PASS_THRESHOLD
from terminal_agent.harbor_jobs.training_trials import TrainingRolloutWriter
from terminal_agent.models.base import first_closed_tag_end
from terminal_agent.outcome import EpisodeOutcome
from terminal_agent.rewards.reward import RewardConfig, reward_at_step
from terminal_agent.rollout.episode_batch import LeakSweeper
from terminal_agent.tasks.model import Task
from terminal_agent.training.algorithms.group_selection import GroupSelection, select_groups
from terminal_agent.training.local.checkpoints import (
    TaskOrder,
    latest_checkpoint,
    load_adapter_weights,
    load_checkpoint,
    save_checkpoint,
    save_warm_start,
    set_rng_state,
)
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.metrics import (
    MetricsLogger,
    UpdateOverlap,
    plot_curves,
    sampler_counters,
    sampler_metrics,
    skipped_steps_before,
)
from terminal_agent.training.local.policy import LocalPolicy, load_policy, make_policy_client
from terminal_agent.training.local.preset_sections import local_preset
from terminal_agent.training.local.rollouts import (
    EpisodeRecord,
    LocalRolloutCollector,
    RolloutBatch,
    default_env_factory,
)
from terminal_agent.training.local.update import StreamedUpdate, UpdateStats, build_rows
from terminal_agent.training.local.validation import HeldOutValidation
from terminal_agent.training.preset_config import TrainingPreset
from terminal_agent.training.train_splits import load_train_tasks, local_task_split

logger = logging.getLogger(__name__)


class TrainingProgress(Protocol):
    """What a front end is told while a run goes (every method optional in spirit; implement all)."""

    def run_started(self, first_step: int, last_step: int, resumed_from: int | None) -> None: ...
    def phase_started(self, step: int, phase: str, total: int) -> None: ...
    def phase_advanced(self, step: int, phase: str, done: int) -> None: ...
    def step_finished(self, step: int, metrics: dict[str, Any]) -> None: ...
    def message(self, text: str) -> None: ...


class _NoProgress:
    def run_started(self, first_step: int, last_step: int, resumed_from: int | None) -> None:
        pass

    def phase_started(self, step: int, phase: str, total: int) -> None:
        pass

    def phase_advanced(self, step: int, phase: str, done: int) -> None:
        pass

    def step_finished(self, step: int, metrics: dict[str, Any]) -> None:
        pass

    def message(self, text: str) -> None:
        pass


@dataclass
class TrainingSummary:
    """What a finished (or resumed-and-finished) run reports."""

    run_dir: Path
    steps: int
    """Steps of the whole run (the last step's number)."""
    steps_this_session: int
    resumed_from: int | None
    """The checkpoint step this session started after (None: a fresh run)."""
    checkpoint: Path | None
    metrics_path: Path
    curves_path: Path | None
    wandb_dir: Path | None
    skipped_tasks: dict[str, str] = field(default_factory=dict)
    first_reward_mean: float | None = None
    last_reward_mean: float | None = None
    samples_trained: int = 0
    groups_dropped: int = 0
    masked_infrastructure: int = 0
    optimizer_steps: int = 0
    skipped_optimizer_steps: int = 0
    """Steps of this session whose optimizer step was skipped (non-finite gradient norm)."""
    sft: dict[str, Any] | None = None
    wall_s: float = 0.0

    def count_step(self, selection: GroupSelection, stats: UpdateStats, reward_mean: float | None) -> None:
        """Add one finished step: its kept samples, dropped groups, masked episodes, optimizer step, reward."""
        self.steps_this_session += 1
        self.samples_trained += selection.samples_kept
        self.groups_dropped += selection.groups_dropped_zero_variance + selection.groups_dropped_empty
        self.masked_infrastructure += selection.masked_infrastructure
        self.optimizer_steps += int(stats.stepped)
        self.skipped_optimizer_steps += int(stats.skipped)
        if reward_mean is not None:
            if self.first_reward_mean is None:
                self.first_reward_mean = reward_mean
            self.last_reward_mean = reward_mean


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def step_metrics(batch: RolloutBatch, selection: GroupSelection, stats: UpdateStats, advantages: list[np.ndarray]) -> dict[str, Any]:
    """The record of one step: rollout, selection, update and time figures."""
    records: list[EpisodeRecord] = [r for g in batch.groups for r in g]
    outcomes: list[EpisodeOutcome] = [r.outcome for r in records]
    scored = [o for o in outcomes if o.trainable]
    rewards = [float(o.reward) for o in scored if o.reward is not None]  # trainable: every one has a reward
    replies = [t for r in records for t in r.texts]
    format_errors = sum(1 for t in replies if first_closed_tag_end(t) is None)
    flat_adv = np.concatenate(advantages) if advantages else np.array([])
    metrics: dict[str, Any] = {
        "rollout/episodes": len(outcomes),
        "rollout/scored": len(scored),
        "rollout/reward_mean": _mean(rewards),
        "rollout/reward_std": float(np.std(rewards)) if rewards else None,
        "rollout/pass_rate": _mean([1.0 if r >= PASS_THRESHOLD else 0.0 for r in rewards]),
        "rollout/truncated": selection.truncated,
        "rollout/length_cut_turns": selection.length_cut_turns,
        "rollout/format_errors": format_errors,
        "rollout/replies": len(replies),
        "rollout/completion_tokens": sum(len(t.completion_ids) for o in outcomes for t in o.turn_tokens),
        "rollout/prompt_tokens": sum(len(t.prompt_ids) for o in outcomes for t in o.turn_tokens),
        "rollout/turns_mean": _mean([o.turns for o in outcomes]),
        "batch/groups": len(batch.groups),
        "batch/groups_kept": selection.groups_kept,
        "batch/groups_dropped_zero_variance": selection.groups_dropped_zero_variance,
        "batch/groups_dropped_empty": selection.groups_dropped_empty,
        "batch/masked_infrastructure": selection.masked_infrastructure,
        "batch/masked_truncated": selection.masked_truncated,
        "batch/samples_kept": selection.samples_kept,
        "batch/skipped_tasks": len(batch.skipped),
        "advantage/mean": float(flat_adv.mean()) if flat_adv.size else None,
        "advantage/abs_max": float(np.abs(flat_adv).max()) if flat_adv.size else None,
        "update/rows": stats.rows,
        "update/trained_tokens": stats.tokens,
        "update/micro_batches": stats.micro_batches,
        "update/stepped": int(stats.stepped),
        "time/rollout_wall_s": batch.wall_s,
        "time/rollout_head_s": batch.head_and_tail_s()[0],
        "time/rollout_tail_s": batch.head_and_tail_s()[1],
        "time/env_s": sum(r.env_s for r in records),
        "time/model_s": sum(r.model_s for r in records),
        "time/update_s": stats.update_s,
    }
    metrics.update(stats.metrics)
    return metrics


def apply_judge_schedule(
    groups: Sequence[Sequence[EpisodeOutcome]], reward: RewardConfig, step: int
) -> list[list[EpisodeOutcome]]:
    """The groups with each scored episode's reward recombined with the judge weight of ``step``: new records (the
    outcomes are frozen); no schedule: the same records."""
    if reward.judge_schedule is None:
        return [list(group) for group in groups]
    return [[_rescheduled(outcome, reward, step) for outcome in group] for group in groups]


def _rescheduled(outcome: EpisodeOutcome, reward: RewardConfig, step: int) -> EpisodeOutcome:
    if not outcome.trainable:
        return outcome
    value = reward_at_step(outcome.final_info(), reward, step)
    return dataclasses.replace(outcome, reward=value)  # its final_info() follows the new reward


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _make_optimizer(policy: LocalPolicy, lr: float, weight_decay: float) -> Any:
    import torch

    return torch.optim.AdamW(policy.trainable_parameters(), lr=lr, weight_decay=weight_decay)


@dataclass(frozen=True)
class _RunStart:
    """Where a run starts: fresh (seeded; every field but ``order`` None) or after a checkpoint's step."""

    order: TaskOrder
    checkpoint: Path | None = None
    resumed_from: int | None = None
    wandb_id: str | None = None
    sft: dict[str, Any] | None = None


def _run_start(config: LocalTrainingConfig, tasks: Sequence[Task], run_dir: Path, policy: LocalPolicy,
               optimizer: Any, progress: TrainingProgress) -> _RunStart:
    """Resume from the run's latest checkpoint (``trainer.resume``): the adapter, the optimizer, the task order and
    the random state come back; else seed everything for a fresh run. Raises ConfigError when the checkpoint was
    written for another number of train tasks."""
    order = task_order_of(tasks, config)
    checkpoint_path = latest_checkpoint(run_dir) if config.resume else None
    if checkpoint_path is None:
        _seed_everything(config.seed)
        return _RunStart(order=order)
    ck = load_checkpoint(checkpoint_path)
    if ck.task_order.get("count") != len(tasks):
        raise ConfigError(
            f"{checkpoint_path} was written for {ck.task_order.get('count')} train tasks, this run has {len(tasks)}; "
            "use a new run directory (or trainer.resume=disable)"
        )
    load_adapter_weights(policy.model, checkpoint_path)
    optimizer.load_state_dict(ck.optimizer)
    set_rng_state(ck.rng)
    progress.message(f"resuming after step {ck.step} from {checkpoint_path}")
    return _RunStart(order=TaskOrder.from_state(ck.task_order), checkpoint=checkpoint_path, resumed_from=ck.step,
                     wandb_id=ck.extra.get("wandb_id"), sft=ck.extra.get("sft"))


def task_order_of(tasks: Sequence[Task], config: LocalTrainingConfig) -> TaskOrder:
    """The draw order of a fresh run: seeded epochs, or the ``easy_to_hard`` curriculum (``local.curriculum``)."""
    if config.curriculum == "easy_to_hard":
        opening_steps = max(1, round(config.curriculum_share * config.steps))
        return TaskOrder.easy_to_hard([t.difficulty for t in tasks], config.seed, opening_steps * config.tasks_per_step)
    return TaskOrder(len(tasks), config.seed)


def train_local(
    config: LocalTrainingConfig,
    train_tasks: Sequence[Task],
    run_dir: Path,
    *,
    progress: TrainingProgress | None = None,
    env_factory: Callable[..., Any] = default_env_factory,
    image_builder: Callable[[Task], None] | None = None,
    client_factory: Callable[[LocalPolicy, LocalTrainingConfig], Any] | None = None,
    policy: LocalPolicy | None = None,
    val_tasks: Sequence[Task] = (),
) -> TrainingSummary:
    """Run (or resume) a local GRPO run on ``train_tasks`` in ``run_dir``; see the module docstring.

    ``client_factory(policy, config)`` replaces the policy's sampling client (tests drive the
    trainer with demonstration replies); ``policy`` passes an already-loaded policy; ``val_tasks``
    are the held-out tasks of the validation passes config asks for (:mod:`.validation`).
    """
    import torch

    started = time.monotonic()
    progress = progress or _NoProgress()
    tasks = list(train_tasks)
    if not tasks:
        raise ConfigError("the local trainer got no train tasks")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    policy = policy or load_policy(config)
    optimizer = _make_optimizer(policy, config.lr, config.weight_decay)
    start = _run_start(config, tasks, run_dir, policy, optimizer, progress)
    order, resumed_from = start.order, start.resumed_from
    run_id = f"local-{config.experiment}-{uuid.uuid4().hex[:6]}"
    metrics_logger = MetricsLogger(
        run_dir, use_wandb=config.wandb, wandb_mode=config.wandb_mode, project=config.project,
        name=config.experiment, config=config.run_record(), wandb_id=start.wandb_id,
    )
    client = (client_factory or make_policy_client)(policy, config)
    collector = LocalRolloutCollector(client, config, run_id=run_id, env_factory=env_factory, image_builder=image_builder)
    validation = HeldOutValidation(client, config, val_tasks, run_id=run_id, train_tasks=tasks, env_factory=env_factory,
                                   image_builder=image_builder, progress=progress)
    pad_id = policy.pad_id
    rollout_trials = TrainingRolloutWriter(run_dir, config.harbor_rollouts, model_name=str(getattr(client, "name", None) or config.model_path),
                                           experiment=config.experiment)
    summary = TrainingSummary(
        run_dir=run_dir, steps=config.steps, steps_this_session=0, resumed_from=resumed_from, checkpoint=start.checkpoint,
        metrics_path=metrics_logger.path, curves_path=None, wandb_dir=metrics_logger.wandb_dir, sft=start.sft,
    )

    def save(step: int) -> Path:
        return save_checkpoint(
            run_dir, step, policy.model, optimizer, order,
            extra={"wandb_id": metrics_logger.wandb_id, "sft": summary.sft}, keep=config.keep_checkpoints,
        )

    # the leak policy of every run: eval's, verl's and this one
    sweeper = LeakSweeper(config=config.episode.env.sandbox).start()
    try:
        if resumed_from is None and config.sft_enabled:
            from terminal_agent.training.local.sft_warm_start import run_sft_warm_start

            progress.message("SFT warm start on reference solutions of the train tasks")
            sft_result = run_sft_warm_start(
                policy, tasks, config, run_id=run_id, env_factory=env_factory, image_builder=image_builder,
                pad_id=pad_id, progress=progress,
            )
            summary.sft = sft_result.to_dict()
            progress.message(sft_result.describe())
            save_warm_start(run_dir, policy.model)
            summary.checkpoint = save(0)
            resumed_from_step = 0
        else:
            resumed_from_step = resumed_from or 0
        first = resumed_from_step + 1
        skipped_steps = skipped_steps_before(run_dir, first)  # the run's count, across resumes
        progress.run_started(first, config.steps, resumed_from)
        validation.before_training(first, metrics_logger)  # val_before_train: the baseline, as step 0
        for step in range(first, config.steps + 1):
            step_started = time.monotonic()
            step_tasks = [tasks[i] for i in order.next_batch(config.tasks_per_step)]
            total_episodes = len(step_tasks) * config.group_size
            progress.phase_started(step, "rollouts", total_episodes)
            done = 0

            def on_episode(record: EpisodeRecord, step: int = step) -> None:
                nonlocal done
                done += 1
                progress.phase_advanced(step, "rollouts", done)

            update = StreamedUpdate(
                policy.model, optimizer, config.actor_loss_config(), temperature=config.temperature,
                grad_clip=config.grad_clip, pad_id=pad_id, micro_batch_tokens=config.micro_batch_tokens,
            )
            overlap = UpdateOverlap(client)

            def on_group(g: int, records: list[EpisodeRecord], step: int = step, update: StreamedUpdate = update,
                         overlap: UpdateOverlap = overlap) -> None:
                # a graded group's forward and backward passes run while the step's other episodes still do
                outcomes = apply_judge_schedule([[r.outcome for r in records]], config.episode.env.reward, step)
                group_selection = select_groups(outcomes, reject_zero_variance=config.reject_zero_variance_groups,
                                                mask_truncated=config.mask_truncated)
                group_rows, _ = build_rows(outcomes, group_selection, estimator=config.adv_estimator,
                                           norm_by_std=config.norm_adv_by_std_in_grpo, group_offset=g)
                with overlap.timed():
                    update.add(group_rows)

            sampler_before = sampler_counters(client)
            prepared_before = collector.prepared_taken
            batch = collector.collect(step_tasks, step, on_episode=on_episode,
                                      on_group=on_group if config.stream_update else None)
            rollouts_done = time.monotonic()
            sampler_after = sampler_counters(client)
            prepared_episodes = collector.prepared_taken - prepared_before
            if step < config.steps:  # the next step's sandboxes start while this step is selected and updated
                collector.prepare([tasks[i] for i in order.peek_batch(config.tasks_per_step)], step + 1)
            for task_id, why in batch.skipped.items():
                if task_id not in summary.skipped_tasks:
                    summary.skipped_tasks[task_id] = why
                    progress.message(f"skipped task {task_id}: {why}")
            outcomes = apply_judge_schedule(batch.outcomes, config.episode.env.reward, step)
            selection = select_groups(
                outcomes, reject_zero_variance=config.reject_zero_variance_groups, mask_truncated=config.mask_truncated
            )
            rows, advantages = build_rows(
                outcomes, selection, estimator=config.adv_estimator, norm_by_std=config.norm_adv_by_std_in_grpo
            )
            progress.phase_started(step, "update", max(1, len(rows)))
            if not config.stream_update:
                update.add(rows)
            elif update.rows != len(rows):  # the streamed groups are the batch's kept groups, in another order
                raise RuntimeError(f"step {step}: {update.rows} rows were streamed, the batch has {len(rows)}")
            stats = update.finish()
            progress.phase_advanced(step, "update", max(1, len(rows)))
            metrics = step_metrics(batch, selection, stats, advantages)
            written = time.monotonic()
            if rollout_trials.write_step(step, batch.groups, selection, advantages) is not None:  # RUN/rollouts/
                metrics["time/harbor_rollouts_s"] = time.monotonic() - written
            skipped_steps += int(stats.skipped)
            metrics["update/skipped_steps"] = skipped_steps
            metrics["time/step_s"] = time.monotonic() - step_started
            metrics["time/update_overlap_s"] = overlap.overlap_s
            metrics["time/update_after_rollouts_s"] = time.monotonic() - rollouts_done
            metrics["rollout/prepared_episodes"] = prepared_episodes
            metrics.update(sampler_metrics(sampler_before, sampler_after, metrics))
            metrics["task_ids"] = [t.task_id for t in step_tasks]
            validation.after_step(step, metrics)  # trainer.test_freq: the pass's val/ figures join the step's line
            metrics_logger.log(step, metrics)
            summary.count_step(selection, stats, metrics["rollout/reward_mean"])
            if step == config.steps or (config.save_freq > 0 and step % config.save_freq == 0):
                summary.checkpoint = save(step)
            progress.step_finished(step, metrics)
    finally:
        collector.close()  # sandboxes prepared for a step that will not run
        sweeper.stop()
        close = getattr(client, "close", None)
        if callable(close):
            close()
        metrics_logger.finish()
        summary.curves_path = plot_curves(run_dir)
        summary.wall_s = time.monotonic() - started
        if summary.skipped_optimizer_steps:
            progress.message(f"{summary.skipped_optimizer_steps} of {summary.steps_this_session} steps skipped their "
                             "optimizer step (non-finite gradient norm): see update/skipped_steps")
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return summary


def run_local_training(preset: TrainingPreset, run_dir: Path, *, config: LocalTrainingConfig | None = None,
                       progress: TrainingProgress | None = None, **overrides: Any) -> TrainingSummary:
    """Entry point of the launcher for a ``backend: local`` preset.

    Loads the preset's train and held-out splits (``data.splits``, or ``data.tasks`` split by
    ``data.val_fraction`` and ``data.split_seed``), trains on the first and validates on the second
    when the preset asks (``trainer.test_freq``, ``trainer.val_before_train``); ``overrides`` set
    :class:`LocalTrainingConfig` fields; ``config``: the one the launch plan built from the preset already
    (the launcher's), used as it is. Quiet unless ``progress`` is given (``launch_training.py`` passes the
    CLI's rich view).
    """
    if config is None:
        config = LocalTrainingConfig.from_preset(local_preset(preset), **overrides)
    train, held_out = local_task_split(preset)
    return train_local(config, train, run_dir, progress=progress, val_tasks=held_out)


__all__ = ["TrainingProgress", "TrainingSummary", "load_train_tasks", "run_local_training", "step_metrics", "train_local"]
