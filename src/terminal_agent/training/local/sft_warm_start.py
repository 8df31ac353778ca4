"""Optional supervised warm start: imitate reference solutions of the *train* tasks before GRPO.

For each train task with a reference solution, one real episode is run through the agent, env
and grader with a :class:`~terminal_agent.training.local.demonstration_client.DemonstrationClient`
replaying two replies: a ``bash`` action running the solution script, then ``finish``. The
episode's turns (instruction -> action -> its real observation -> finish) are recorded as
:class:`~terminal_agent.outcome.TurnTokens` exactly like sampled ones, and only transcripts
whose grade passes are kept. Training is next-token NLL (token-mean) on the assistant tokens
only - the same rows and masks as the GRPO update. Held-out tasks never reach this function: the
caller passes the train split.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from terminal_agent.evaluation.results import PASS_THRESHOLD
from terminal_agent.tasks.model import Task
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.demonstration_client import FINISH_REPLY, DemonstrationClient, bash_reply
from terminal_agent.training.local.policy import LocalPolicy
from terminal_agent.training.local.rollouts import LocalRolloutCollector
from terminal_agent.training.local.update import TrainingRow, forward_response_logprobs, micro_batches, pack_rows, rows_from_turns

logger = logging.getLogger(__name__)

def solution_replies(task: Task) -> list[str]:
    if not task.solution:
        raise ValueError(f"task {task.task_id} has no reference solution")
    return [bash_reply(task.solution), FINISH_REPLY]


@dataclass
class SftResult:
    """What the warm start did."""

    tasks_used: list[str] = field(default_factory=list)
    tasks_skipped: dict[str, str] = field(default_factory=dict)
    """task id -> why no transcript was used (no solution, image, the solution did not pass)."""
    rows: int = 0
    tokens: int = 0
    optimizer_steps: int = 0
    epoch_losses: list[float] = field(default_factory=list)
    wall_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        losses = ", ".join(f"{x:.3f}" for x in self.epoch_losses) or "-"
        return (
            f"SFT warm start: {len(self.tasks_used)} transcripts, {self.tokens} tokens, "
            f"{self.optimizer_steps} steps, loss per epoch {losses}, {len(self.tasks_skipped)} tasks skipped"
        )


def collect_solution_rows(
    policy: LocalPolicy,
    tasks: Sequence[Task],
    config: LocalTrainingConfig,
    *,
    run_id: str,
    env_factory: Callable[..., Any],
    image_builder: Callable[[Task], None] | None,
    result: SftResult,
) -> list[TrainingRow]:
    """Run each task's reference solution as an episode and turn the passing ones into rows."""
    with_solution = []
    for task in tasks:
        if task.solution:
            with_solution.append(task)
        else:
            result.tasks_skipped[task.task_id] = "no reference solution"
    if not with_solution:
        return []
    demo_config = config.model_copy(update={"group_size": 1, "episode": config.episode.with_max_steps(3)})
    collector = LocalRolloutCollector(
        client=DemonstrationClient(policy.model, policy.tokenizer, [FINISH_REPLY]),  # unused: client_for decides
        config=demo_config,
        run_id=run_id,
        env_factory=env_factory,
        image_builder=image_builder,
        client_for=lambda task, attempt: DemonstrationClient(
            policy.model, policy.tokenizer, solution_replies(task), temperature=config.temperature
        ),
    )
    batch = collector.collect(with_solution, step=0)
    result.tasks_skipped.update(batch.skipped)
    rows: list[TrainingRow] = []
    for g, group in enumerate(batch.groups):
        record = group[0]
        outcome = record.outcome
        if not outcome.trainable:
            result.tasks_skipped[record.task_id] = f"not scored ({outcome.termination.value}: {outcome.error})"
            continue
        if outcome.reward is None or outcome.reward < PASS_THRESHOLD:
            result.tasks_skipped[record.task_id] = f"the reference solution scored {outcome.reward}"
            continue
        result.tasks_used.append(record.task_id)
        rows.extend(rows_from_turns(outcome.turn_tokens, 0.0, g, 0))
    return rows


def sft_epoch(model: Any, optimizer: Any, rows: Sequence[TrainingRow], *, pad_id: int, temperature: float,
              micro_batch_tokens: int, grad_clip: float, shuffle_seed: int | None = None) -> tuple[float, int]:
    """One pass of token-mean NLL over ``rows``, one optimizer step per micro-batch; (mean loss, steps).

    With ``shuffle_seed`` the rows are visited in a seeded random order (so the micro-batches of a
    large warm start mix tasks and families instead of following the task list)."""
    import torch

    model.train()
    losses, steps = [], 0
    if shuffle_seed is not None:
        rows = list(rows)
        random.Random(shuffle_seed).shuffle(rows)
    for batch in micro_batches(rows, micro_batch_tokens):
        packed = pack_rows(batch, pad_id, next(model.parameters()).device)
        logprobs, _ = forward_response_logprobs(model, packed, temperature)
        mask = packed.response_mask
        loss = -(logprobs * mask).sum() / mask.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], grad_clip)
        if math.isfinite(float(norm)):
            optimizer.step()
            steps += 1
        losses.append(float(loss.detach()))
    optimizer.zero_grad(set_to_none=True)
    return (sum(losses) / len(losses) if losses else float("nan")), steps


def run_sft_warm_start(
    policy: LocalPolicy,
    train_tasks: Sequence[Task],
    config: LocalTrainingConfig,
    *,
    run_id: str,
    env_factory: Callable[..., Any],
    image_builder: Callable[[Task], None] | None,
    pad_id: int,
    progress: Any = None,
) -> SftResult:
    """Collect the solution transcripts of ``train_tasks`` and train ``config.sft_epochs`` on them."""
    import torch

    started = time.monotonic()
    result = SftResult()
    rows = collect_solution_rows(
        policy, train_tasks, config, run_id=run_id, env_factory=env_factory, image_builder=image_builder, result=result
    )
    result.rows = len(rows)
    result.tokens = sum(r.trained_tokens for r in rows)
    if rows:
        optimizer = torch.optim.AdamW([p for p in policy.model.parameters() if p.requires_grad], lr=config.sft_lr)
        for epoch in range(config.sft_epochs):
            if progress is not None:
                progress.phase_started(0, f"sft epoch {epoch + 1}", 1)
            loss, steps = sft_epoch(
                policy.model, optimizer, rows, pad_id=pad_id, temperature=config.temperature,
                micro_batch_tokens=config.micro_batch_tokens, grad_clip=config.grad_clip,
                shuffle_seed=config.seed * 1_000 + epoch,
            )
            result.epoch_losses.append(loss)
            result.optimizer_steps += steps
            if progress is not None:
                progress.phase_advanced(0, f"sft epoch {epoch + 1}", 1)
    else:
        logger.warning("SFT warm start: no usable reference-solution transcript; skipped")
    result.wall_s = time.monotonic() - started
    return result


__all__ = ["FINISH_REPLY", "SftResult", "bash_reply", "collect_solution_rows", "run_sft_warm_start", "solution_replies", "sft_epoch"]
