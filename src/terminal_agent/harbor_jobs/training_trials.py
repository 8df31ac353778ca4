"""The local trainer's rollouts as Harbor jobs: ``RUN/rollouts/step-NNNNNN/`` holds one step's episodes.

Each episode is a trial named ``step-NNNNNN__group-GG__episode-E`` (its task in ``task_name``) whose
``agent_result.metadata`` carries the step, the group, the episode, the group's rewards and advantages, the
episode's own advantage (None when the trainer did not use it: masked, or its group dropped), whether it trained,
and the policy version that sampled it (the optimizer steps taken before: ``step - 1``).

:class:`RolloutTrialsConfig` keeps a 1,000-step run from filling the disk: write every Nth step only, only the
groups whose rewards differ (what GRPO learned from), and a disk budget past which the oldest steps' jobs are
deleted.
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, SupportsFloat

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.harbor_jobs.job_files import HarborJobSettings, HarborJobWriter
from terminal_agent.harbor_jobs.records import HarborTrialRecord, ModelCallRecord, turns_from_trajectory
from terminal_agent.outcome import EpisodeOutcome
from terminal_agent.rollout.transcripts import to_jsonable

logger = logging.getLogger(__name__)

ROLLOUTS_DIR = "rollouts"


class ScoredEpisode(Protocol):
    """An episode with its verdict (what :func:`rewards_differ` reads)."""

    @property
    def outcome(self) -> EpisodeOutcome: ...


class TrainingEpisode(ScoredEpisode, Protocol):
    """A training episode as its trial is written from: the local trainer's
    :class:`~terminal_agent.rollout.episode_record.EpisodeRecord` and the rLLM Workflow's
    :class:`~terminal_agent.training.verl.rllm_rollout_trials.RllmRolloutEpisode` both are one."""

    @property
    def task_id(self) -> str: ...

    @property
    def trajectory(self) -> object:
        """The agent's rLLM trajectory (rLLM is untyped: made JSON by ``to_jsonable``); None when it never started."""

    @property
    def final_observation(self) -> str | None: ...

    @property
    def model_s(self) -> float: ...

    @property
    def env_s(self) -> float: ...

    @property
    def wall_s(self) -> float: ...


class KeptSamples(Protocol):
    """Which samples of each group trained: the trainer's ``GroupSelection`` (per group, the kept indices)."""

    @property
    def kept(self) -> Sequence[Sequence[int]]: ...


class RolloutTrialsConfig(BaseModel):
    """Which training episodes are kept as Harbor trials (``RUN/rollouts/``; ``terminal-agent view RUN`` opens them)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Write the rollouts at all."""
    every_n_steps: int = Field(1, ge=1)
    """Write step 1 and every step divisible by this."""
    only_groups_with_variance: bool = False
    """Write only the groups whose scored rewards differ (the groups GRPO learns from)."""
    max_disk_mb: float | None = Field(None, gt=0)
    """Disk budget of ``rollouts/``: past it the oldest steps' jobs are deleted (the newest step is always kept);
    None: no budget."""

    def keeps_step(self, step: int) -> bool:
        """Whether step ``step`` (1-based) is written."""
        return self.enabled and (step == 1 or step % self.every_n_steps == 0)


def folder_size_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def step_job_name(step: int) -> str:
    return f"step-{step:06d}"


def kept_advantages(selection: KeptSamples, advantages: Sequence[Iterable[SupportsFloat]]) -> dict[tuple[int, int], float]:
    """``(group, episode) -> advantage`` of the samples the trainer used (``build_rows``' order: kept groups)."""
    kept_groups = [(g, kept) for g, kept in enumerate(selection.kept) if kept]
    return {(g, i): float(a) for (g, kept), group_adv in zip(kept_groups, advantages) for i, a in zip(kept, group_adv)}


def _calls_of(trajectory: dict[str, Any] | None, outcome: EpisodeOutcome) -> list[ModelCallRecord]:
    """The model calls of a training episode: each step's chat before its reply, and the turn's exact tokens."""
    steps = (trajectory or {}).get("steps") or []
    tokens = list(outcome.turn_tokens)
    calls: list[ModelCallRecord] = []
    for index, step in enumerate(steps):
        chat = list(step.get("chat_completions") or [])
        turn = tokens[index] if index < len(tokens) else None
        calls.append(ModelCallRecord(
            messages=chat[:-1] if chat and chat[-1].get("role") == "assistant" else chat,
            reply=str(step.get("model_response") or ""),
            finish_reason=turn.finish_reason if turn else None,
            prompt_tokens=len(turn.prompt_ids) if turn else None,
            completion_tokens=len(turn.completion_ids) if turn else None,
            prompt_ids=list(turn.prompt_ids) if turn else None,
            completion_ids=list(turn.completion_ids) if turn else None,
            logprobs=list(turn.logprobs) if turn and turn.logprobs is not None else None,
        ))
    return calls


class TrainingRolloutWriter:
    """Writes the steps :class:`RolloutTrialsConfig` keeps; call :meth:`write_step` after each step's update."""

    def __init__(self, run_dir: Path, config: RolloutTrialsConfig, *, model_name: str, experiment: str):
        self.root = Path(run_dir) / ROLLOUTS_DIR
        self.config = config
        self.model_name = model_name
        self.experiment = experiment

    def wants(self, step: int) -> bool:
        return self.config.keeps_step(step)

    def write_step(self, step: int, groups: Sequence[Sequence[TrainingEpisode]], selection: KeptSamples,
                   advantages: Sequence[Iterable[SupportsFloat]],
                   *, started_at: dt.datetime | None = None) -> Path | None:
        """Write step ``step``'s groups of ``EpisodeRecord`` s; returns its job folder (None: not kept)."""
        if not self.wants(step):
            return None
        advantage_of = kept_advantages(selection, advantages)
        chosen = [g for g, group in enumerate(groups)
                  if not self.config.only_groups_with_variance or rewards_differ(group)]
        now = dt.datetime.now(dt.timezone.utc)
        job_dir = self.root / step_job_name(step)
        writer = HarborJobWriter(job_dir, HarborJobSettings(
            job_name=job_dir.name, model_name=self.model_name, n_total_trials=sum(len(groups[g]) for g in chosen),
            started_at=started_at or now, n_attempts=max((len(g) for g in groups), default=1), source=f"train:{self.experiment}",
            agent_kwargs={"step": step, "policy_version": step - 1}, run_id=f"{self.experiment}/{job_dir.name}",
        ))
        try:
            writer.start()
            for g in chosen:
                group = groups[g]
                rewards = [r.outcome.reward if r.outcome.scored else None for r in group]
                group_adv = [advantage_of.get((g, i)) for i in range(len(group))]
                for i, record in enumerate(group):
                    writer.add(episode_trial_record(
                        f"{step_job_name(step)}__group-{g:02d}__episode-{i}", record, model_name=self.model_name,
                        finished_at=now, source=f"train:{self.experiment}",
                        metadata={"step": step, "group": g, "episode": i, "policy_version": step - 1,
                                  "advantage": group_adv[i], "trained": group_adv[i] is not None,
                                  "group_rewards": rewards, "group_advantages": group_adv},
                    ))
            writer.finish()
        except OSError as exc:  # a full disk costs the viewer this step, never the training run
            logger.warning("could not write the rollouts of step %d as Harbor trials: %s", step, exc)
            return None
        keep_within_budget(self.root, self.config.max_disk_mb, job_dir)
        return job_dir

def episode_trial_record(trial_name: str, record: TrainingEpisode, *, model_name: str, finished_at: dt.datetime,
                         metadata: dict[str, Any], source: str) -> HarborTrialRecord:
    """The trial of one training episode (:class:`TrainingEpisode`: ``task_id``, ``outcome``, ``trajectory`` (the
    agent's rLLM trajectory), ``final_observation`` and the ``model_s`` / ``env_s`` / ``wall_s`` timings; the local
    trainer's ``EpisodeRecord``, the rLLM Workflow's episodes in
    :mod:`terminal_agent.training.verl.rllm_rollout_trials`). ``metadata``: the step, group,
    episode, advantages and policy version, shown in the trial's ``agent_result.metadata``."""
    jsonable = to_jsonable(record.trajectory)
    trajectory: dict[str, Any] | None = jsonable if isinstance(jsonable, dict) else None
    calls = _calls_of(trajectory, record.outcome)
    final = record.final_observation
    episode = metadata.get("episode", 0)
    return HarborTrialRecord(
        trial_name=trial_name,
        task_id=record.task_id,
        attempt=int(episode) if isinstance(episode, int) else 0,
        model_name=model_name,
        outcome=record.outcome,
        started_at=finished_at - dt.timedelta(seconds=float(record.wall_s or 0.0)),
        finished_at=finished_at,
        instruction=_instruction(calls, trajectory),
        system_prompt=_system_prompt(calls),
        calls=calls,
        turns=turns_from_trajectory(trajectory, final),
        metadata={**metadata, "model_s": record.model_s, "env_s": record.env_s, "wall_s": record.wall_s},
        source=source,
    )


def keep_within_budget(root: Path, budget_mb: float | None, newest: Path) -> None:
    """Delete the oldest ``step-*`` jobs under ``root`` until it fits ``budget_mb`` (``newest`` is always kept)."""
    if budget_mb is None or not root.is_dir():
        return
    steps = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("step-"))
    sizes = {p: folder_size_bytes(p) for p in steps}
    total = sum(sizes.values())
    for old in steps:
        if total <= budget_mb * 1024 * 1024 or old == newest:
            break
        shutil.rmtree(old, ignore_errors=True)
        total -= sizes[old]
        logger.info("rollouts over their %.0f MB budget: deleted %s", budget_mb, old.name)


def rewards_differ(group: Sequence[ScoredEpisode]) -> bool:
    """Whether the scored rewards of ``group`` (episodes with an ``outcome``) differ: what ``only_groups_with_variance``
    keeps."""
    rewards = {round(float(r.outcome.reward), 9) for r in group if r.outcome.scored and r.outcome.reward is not None}
    return len(rewards) > 1


def _instruction(calls: list[ModelCallRecord], trajectory: dict[str, Any] | None) -> str:
    """The task as the model read it: the first call's user message (the agent renders the task into it). Without a
    call, the trajectory's task when it is text. rLLM's Workflow puts the whole dataset row on ``trajectory.task``
    (test source included), which is never shown as the task."""
    if calls:
        first_user = next((m for m in calls[0].messages if m.get("role") == "user"), None)
        if first_user is not None:
            return str(first_user.get("content") or "")
    task = (trajectory or {}).get("task")
    return task if isinstance(task, str) else ""


def _system_prompt(calls: list[ModelCallRecord]) -> str | None:
    if calls and calls[0].messages and calls[0].messages[0].get("role") == "system":
        return str(calls[0].messages[0].get("content") or "")
    return None


__all__ = ["KeptSamples", "ROLLOUTS_DIR", "RolloutTrialsConfig", "ScoredEpisode", "TrainingEpisode", "TrainingRolloutWriter",
           "episode_trial_record", "keep_within_budget", "kept_advantages", "rewards_differ", "step_job_name"]
