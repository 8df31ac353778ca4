"""Validation of the local trainer on held-out tasks (``trainer.test_freq``, ``trainer.val_before_train``).

At the steps a run asks for (step 0, before the first GRPO step, with ``val_before_train``; every
``test_freq`` steps and after the last one with ``test_freq > 0``, as verl does) the current policy runs
``val_n`` episodes of each held-out task through the trainer's own rollout path: a
:class:`~terminal_agent.training.local.rollouts.LocalRolloutCollector` with the same policy client,
agent, env, sandbox backend and grader as the training episodes, at ``val_temperature``. Nothing of
it is trained on. The step's record gets ``val/reward_mean`` and ``val/pass_rate`` (over the scored
episodes, as ``rollout/*``), with ``val/tasks``, ``val/episodes``, ``val/scored``,
``val/skipped_tasks`` and ``val/wall_s``.

Every pass runs the same tasks (at most ``val_max_tasks``: a sample seeded by 0) with the same
sampling seeds, so two passes differ only by the policy. The reward is the env's, with the run's
base reward weights (a judge schedule is not applied), so passes compare across steps.

Where the held-out tasks come from (``train_splits.local_task_split``, what the launcher runs): the frozen
splits file of ``data.splits`` (its ``held_out`` split: whole held-out families and hand-written
held-out tasks; its ``train`` split is trained on), else the ``data.val_fraction`` hash split of
``data.tasks``.

``metrics.jsonl`` keeps one line per step: a step that validates carries its ``val/`` figures on
that line (its ``time/step_s`` leaves the pass out); the pass before training is the record of step 0.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from terminal_agent.errors import ConfigError
from terminal_agent.evaluation.results import PASS_THRESHOLD
from terminal_agent.interfaces import ModelClient
from terminal_agent.tasks.model import Task
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.rollouts import LocalRolloutCollector, RolloutBatch, default_env_factory

logger = logging.getLogger(__name__)

#: The ``step`` the collector derives validation episodes' sampling seeds from: no training step has it,
#: and every pass uses it, so the passes sample with the same seeds.
VALIDATION_SEED_STEP = -1
#: Seed of the sample that ``val_max_tasks`` keeps.
SAMPLE_SEED = 0


def capped_tasks(tasks: Sequence[Task], limit: int | None) -> list[Task]:
    """``limit`` of ``tasks`` (a sample seeded by :data:`SAMPLE_SEED`, in their order), or all of them."""
    tasks = list(tasks)
    if limit is None or limit >= len(tasks):
        return tasks
    keep = set(random.Random(SAMPLE_SEED).sample(range(len(tasks)), limit))
    return [task for index, task in enumerate(tasks) if index in keep]


def validation_metrics(batch: RolloutBatch, tasks: int) -> dict[str, Any]:
    """The ``val/`` figures of one pass."""
    outcomes = [record.outcome for group in batch.groups for record in group]
    rewards = [float(outcome.reward) for outcome in outcomes if outcome.trainable and outcome.reward is not None]
    return {
        "val/tasks": tasks,
        "val/episodes": len(outcomes),
        "val/scored": len(rewards),
        "val/reward_mean": float(np.mean(rewards)) if rewards else None,
        "val/pass_rate": float(np.mean([reward >= PASS_THRESHOLD for reward in rewards])) if rewards else None,
        "val/skipped_tasks": len(batch.skipped),
        "val/wall_s": batch.wall_s,
    }


class HeldOutValidation:
    """The validation passes of one run; the trainer calls :meth:`before_training` and :meth:`after_step`."""

    def __init__(
        self,
        client: ModelClient,
        config: LocalTrainingConfig,
        tasks: Sequence[Task],
        *,
        run_id: str,
        train_tasks: Sequence[Task] = (),
        env_factory: Callable[..., Any] = default_env_factory,
        image_builder: Callable[[Task], None] | None = None,
        progress: Any = None,
    ):
        """``tasks``: the held-out tasks (capped to ``config.val_max_tasks``); one also in ``train_tasks`` is a
        ConfigError. With validation asked but no tasks given, the run says so and does not validate."""
        self.config = config
        self.tasks = capped_tasks(tasks, config.val_max_tasks)
        self.progress = progress
        shared = {task.task_id for task in self.tasks} & {task.task_id for task in train_tasks}
        if shared:
            raise ConfigError(f"held-out tasks are also train tasks: {', '.join(sorted(shared)[:5])}")
        self.enabled = config.validates and bool(self.tasks)
        if config.validates and not self.tasks:
            self._say("validation asked (trainer.test_freq / trainer.val_before_train) but no held-out tasks were "
                      "given: this run does not validate")
        passes = config.model_copy(update={
            "group_size": config.val_n, "temperature": config.val_temperature, "concurrency": config.episodes_at_once,
        })
        self.collector = LocalRolloutCollector(client, passes, run_id=run_id, env_factory=env_factory,
                                               image_builder=image_builder)

    def _say(self, text: str) -> None:
        logger.info("%s", text)
        if self.progress is not None:
            self.progress.message(text)

    def due(self, step: int) -> bool:
        """Whether ``step`` (a finished GRPO step) validates."""
        freq = self.config.test_freq
        return self.enabled and freq > 0 and (step % freq == 0 or step == self.config.steps)

    def run(self, step: int) -> dict[str, Any]:
        """One pass with the current policy; its ``val/`` figures."""
        total = len(self.tasks) * self.config.val_n
        done = 0
        if self.progress is not None:
            self.progress.phase_started(step, "validation", total)

        def on_episode(record: Any) -> None:
            nonlocal done
            done += 1
            if self.progress is not None:
                self.progress.phase_advanced(step, "validation", done)

        batch = self.collector.collect(self.tasks, VALIDATION_SEED_STEP, on_episode=on_episode)
        metrics = validation_metrics(batch, len(self.tasks))
        reward, rate = metrics["val/reward_mean"], metrics["val/pass_rate"]
        self._say(f"validation at step {step}: reward {'-' if reward is None else f'{reward:.3f}'}, pass "
                  f"{'-' if rate is None else f'{rate:.2f}'} ({metrics['val/scored']} of {total} episodes scored, "
                  f"{len(self.tasks)} held-out tasks, {metrics['val/wall_s']:.1f} s)")
        return metrics

    def before_training(self, first_step: int, metrics_logger: Any) -> None:
        """With ``val_before_train``, on a run that starts at step 1: the baseline pass, logged as step 0."""
        if self.enabled and self.config.val_before_train and first_step == 1:
            metrics_logger.log(0, self.run(0))

    def after_step(self, step: int, metrics: dict[str, Any]) -> None:
        """At a step that validates: run the pass and add its figures to the step's ``metrics`` (before they are
        logged; ``time/step_s`` is already in them and leaves the pass out)."""
        if self.due(step):
            metrics.update(self.run(step))


__all__ = [
    "HeldOutValidation", "VALIDATION_SEED_STEP", "capped_tasks", "validation_metrics",
]
