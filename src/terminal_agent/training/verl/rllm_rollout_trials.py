"""The rLLM Workflow's training rollouts as Harbor jobs: ``RUN/rollouts/step-NNNNNN/``, as the local trainer writes them.

:class:`~terminal_agent.training.verl.rllm_workflow.TerminalTaskWorkflow` hands each training episode it returns to the
process-wide :class:`RllmRolloutRecorder` of the run (``workflow_args["harbor_rollouts"]``). A trial is named
``step-NNNNNN__group-GG__episode-E``; its ``agent_result.metadata`` has the keys the local trainer's trials have
(``step``, ``group``, ``episode``, ``policy_version``, ``advantage``, ``trained``, ``group_rewards``,
``group_advantages``) plus rLLM's ids (``rllm_episode_id``, ``rllm_group_id``, ``trajectory_uid``) and
``advantage_source``. Retention is the same
:class:`~terminal_agent.harbor_jobs.training_trials.RolloutTrialsConfig`.

Where rLLM HEAD has what this needs (``AgentTrainer(backend="verl")`` runs ``AgentWorkflowPPOTrainer.fit_agent``):

* the episodes: the Workflow builds each ``Episode`` itself. The engine's ``EpisodeLogger`` (``trainer.log_episodes``)
  also sees a step's list, but rLLM builds that class itself from the config: it is no hook one can plug into.
* the group and episode: rLLM's episode id ``"<group uid>:<rollout index>"`` (one group uid per dataset row, the
  GRPO group of ``rollout.n`` episodes).
* the step: verl 0.9.1's vLLM server stamps every generation with the global step of the weights it holds
  (``TokenOutput.extra_fields["global_steps"]``, set by the trainer's ``checkpoint_manager.update_weights(
  global_steps)``); the Workflow's model client puts it on rLLM's ``ModelOutput.weight_version`` (other engines:
  rLLM's ``RolloutEngine.weight_version``). That is the policy version; the training step those rollouts feed is
  the policy version + 1 (a resumed run included).
* the advantages: only inside ``fit_agent`` (verl's ``compute_advantage`` on the step's ``DataProto``, in the
  "adv" block) and never handed back to rLLM's engine or Workflow. They are therefore recomputed here, group by
  group, the way that call computes them: rLLM's transform makes one row per run of prefix-extending turns, the
  row's ``uid`` is rLLM's ``step_ids`` (= ``trajectory.uid``), and verl's ``grpo`` groups rows by that uid (sample
  std, epsilon 1e-6; a group of one: mean 0, std 1). rLLM's default gives every trajectory its own uid (each
  episode a group of one, advantage ``reward / (1 + 1e-6)``); :class:`TerminalTaskWorkflow` gives the episodes
  of one row one uid (``group_trajectory_uid``), so the group is the row's ``rollout.n`` episodes. The trials
  show what training used, whichever uids the trajectories carry.

A group is written when its ``group_size`` episodes are in; a step's job is finished when an episode of a later
step arrives, or at :meth:`RllmRolloutRecorder.close` (process exit). A group that never completed (an episode
lost to rLLM's own timeout, which bypasses the Workflow's return) is written then, ``group_complete: false``.
Validation episodes (rLLM sets ``rollout_engine.validate``) are not written.
"""

from __future__ import annotations

import atexit
import datetime as dt
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.harbor_jobs.job_files import HarborJobSettings, HarborJobWriter
from terminal_agent.harbor_jobs.training_trials import (
    ROLLOUTS_DIR,
    RolloutTrialsConfig,
    episode_trial_record,
    keep_within_budget,
    rewards_differ,
    step_job_name,
)
from terminal_agent.outcome import EpisodeOutcome
from terminal_agent.training.algorithms.advantages import compute_advantages

logger = logging.getLogger(__name__)

VERL_GRPO_EPSILON = 1e-6
"""verl's ``compute_grpo_outcome_advantage`` epsilon."""
VERL_ESTIMATOR_TWINS = {"grpo": "grpo_sample_std"}
"""verl's advantage estimator name -> the registry entry (``ADVANTAGE_ESTIMATORS``) that computes the same numbers:
verl's ``grpo`` divides by ``torch.std`` (the sample std), which is the registry's ``grpo_sample_std``."""


class RllmRolloutTrialsSettings(BaseModel):
    """What the Workflow needs to keep training episodes as Harbor trials (``workflow_args["harbor_rollouts"]``,
    filled from the verl preset by ``training.episode_args.workflow_args_for``)."""

    model_config = ConfigDict(extra="forbid")

    run_dir: str
    """The run directory (absolute: Ray's workers may run elsewhere); the jobs go in ``RUN/rollouts/``."""
    retention: RolloutTrialsConfig = Field(default_factory=RolloutTrialsConfig)
    """Which steps and groups are kept, and the disk budget (the preset's ``trainer.harbor_rollouts``)."""
    group_size: int = Field(ge=1)
    """Episodes per GRPO group (``rollout.n``): a group is written once this many are in."""
    adv_estimator: str = "grpo"
    """verl's ``algorithm.adv_estimator``; the advantages are recomputed as verl computes it (None for an
    estimator without a twin in :data:`VERL_ESTIMATOR_TWINS`)."""
    norm_adv_by_std_in_grpo: bool = True
    """verl's ``algorithm.norm_adv_by_std_in_grpo``."""
    rejection_sample: bool = False
    """rLLM's ``rllm.rejection_sample.enable``: a group whose episodes are all correct or all incorrect
    (``is_correct``: reward > 0) is dropped from training (``trained: false``)."""
    model_name: str = "policy"
    """The policy's name in the trials (the preset's ``model.path``)."""
    experiment: str = "run"
    """The experiment; the trials' source label is ``train:<experiment>``."""


@dataclass
class RllmRolloutEpisode:
    """One training episode of the Workflow, as the recorder needs it."""

    rllm_episode_id: str
    """rLLM's episode id, ``"<group uid>:<rollout index>"``."""
    trajectory_uid: str | None
    """The trajectory's uid: the ``uid`` verl groups its rows by."""
    policy_version: int
    """The weights that sampled it (verl's ``global_steps`` stamp, or the engine's ``weight_version``)."""
    task_id: str
    outcome: EpisodeOutcome
    trajectory: object
    """The agent's rLLM trajectory (each turn's chat, reply, actions and step info; rLLM is untyped: it is only
    made JSON, by ``to_jsonable``)."""
    final_observation: str | None = None
    model_s: float = 0.0
    env_s: float = 0.0
    wall_s: float = 0.0
    trained_rows: int = 0
    """Rows rLLM's verl transform makes of it (runs of prefix-extending turns; 0: dropped, no steps)."""
    is_correct: bool = False
    """rLLM's ``Episode.is_correct`` (what its rejection sampling reads)."""

    @property
    def group_uid(self) -> str:
        return self.rllm_episode_id.rsplit(":", 1)[0]

    @property
    def rollout_index(self) -> int:
        tail = self.rllm_episode_id.rsplit(":", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    @property
    def step(self) -> int:
        return self.policy_version + 1


def rows_in_verl_batch(prompt_ids: Sequence[Sequence[int]], completion_ids: Sequence[Sequence[int]]) -> int:
    """Rows rLLM's verl transform (``_process_trajectory``) makes of turns with these ids: a turn whose prompt
    extends the previous turn's prompt + completion joins its row, any other starts a new one."""
    rows, full = 0, None
    for prompt, completion in zip(prompt_ids, completion_ids):
        prompt = list(prompt)
        if full is not None and len(prompt) >= len(full) and prompt[: len(full)] == full:
            full = prompt + list(completion)
            continue
        rows += 1
        full = prompt + list(completion)
    return rows


def verl_path_advantages(episodes: Sequence[RllmRolloutEpisode], *, adv_estimator: str = "grpo",
                         norm_by_std: bool = True) -> list[float | None]:
    """Each episode's advantage as verl's ``compute_advantage`` computes it in rLLM HEAD's ``fit_agent`` (module
    docstring): the rows of the episodes that train, grouped by their ``uid`` (the trajectory uid), each row the
    episode's reward. None for an episode without rows, or an estimator without a twin."""
    import numpy as np

    twin = VERL_ESTIMATOR_TWINS.get(adv_estimator)
    if twin is None:
        return [None] * len(episodes)
    by_uid: dict[str, list[tuple[int, float]]] = {}
    for index, episode in enumerate(episodes):
        reward = episode.outcome.reward
        if episode.trained_rows and episode.outcome.trainable and reward is not None:  # trainable: it has a reward
            by_uid.setdefault(episode.trajectory_uid or episode.rllm_episode_id, []).append((index, float(reward)))
    out: list[float | None] = [None] * len(episodes)
    for members in by_uid.values():
        rewards = np.array([reward for i, reward in members for _ in range(episodes[i].trained_rows)])
        [advantages] = compute_advantages(twin, [rewards], norm_by_std=norm_by_std, epsilon=VERL_GRPO_EPSILON)
        position = 0
        for i, _ in members:
            out[i] = float(advantages[position])  # every row of one trajectory has the same score, so one advantage
            position += episodes[i].trained_rows
    return out


@dataclass
class _StepJob:
    writer: HarborJobWriter
    groups: dict[str, int] = field(default_factory=dict)
    """Group uid -> its number in the step (the order its first episode ended)."""
    trials: int = 0


class RllmRolloutRecorder:
    """Writes the Workflow's training episodes as Harbor jobs (module docstring); one per run directory and process,
    shared by every pooled Workflow (:func:`rollout_recorder_for`). Thread-safe."""

    def __init__(self, settings: RllmRolloutTrialsSettings):
        self.settings = settings
        self.root = Path(settings.run_dir) / ROLLOUTS_DIR
        self._lock = threading.Lock()
        self._pending: dict[tuple[int, str], list[RllmRolloutEpisode]] = {}
        self._jobs: dict[int, _StepJob] = {}
        self._newest_step = 0

    def record(self, episode: RllmRolloutEpisode) -> None:
        """Take one finished training episode; writes its group when complete. Never raises for the disk."""
        step = episode.step
        with self._lock:
            if step < self._newest_step:  # rLLM's verl loop samples one step at a time: a straggler is not written
                logger.warning("episode %s of step %d arrived after step %d began: not written",
                               episode.rllm_episode_id, step, self._newest_step)
                return
            if step > self._newest_step:
                for older in sorted(s for s in {*self._jobs, *(k[0] for k in self._pending)} if s < step):
                    self._finish_step(older)
                self._newest_step = step
            if not self.settings.retention.keeps_step(step):
                return
            key = (step, episode.group_uid)
            group = self._pending.setdefault(key, [])
            group.append(episode)
            if len(group) >= self.settings.group_size:
                del self._pending[key]
                self._write_group(step, episode.group_uid, group, complete=True)

    def close(self) -> None:
        """Write what is pending and finish every open job (process exit)."""
        with self._lock:
            for step in sorted({*self._jobs, *(k[0] for k in self._pending)}):
                self._finish_step(step)

    # --- writing ---------------------------------------------------------------------------------------
    def _finish_step(self, step: int) -> None:
        for key in sorted(k for k in self._pending if k[0] == step):
            self._write_group(step, key[1], self._pending.pop(key), complete=False)
        job = self._jobs.pop(step, None)
        if job is not None:
            self._finish_job(job)

    def _finish_job(self, job: _StepJob) -> None:
        job.writer.settings.n_total_trials = job.trials
        try:
            job.writer.finish()
        except OSError as exc:  # a full disk costs the viewer this step, never the training run
            logger.warning("could not finish the Harbor job %s: %s", job.writer.job_dir, exc)

    def _job(self, step: int) -> _StepJob:
        job = self._jobs.get(step)
        if job is None:
            s = self.settings
            job_dir = self.root / step_job_name(step)
            writer = HarborJobWriter(job_dir, HarborJobSettings(
                job_name=job_dir.name, model_name=s.model_name, n_total_trials=0,
                started_at=dt.datetime.now(dt.timezone.utc), n_attempts=s.group_size, source=f"train:{s.experiment}",
                agent_kwargs={"step": step, "policy_version": step - 1}, run_id=f"{s.experiment}/{job_dir.name}",
            ))
            writer.start()
            job = self._jobs[step] = _StepJob(writer)
        return job

    def _write_group(self, step: int, group_uid: str, group: list[RllmRolloutEpisode], *, complete: bool) -> None:
        s = self.settings
        group.sort(key=lambda e: e.rollout_index)
        if s.retention.only_groups_with_variance and not rewards_differ(group):
            return
        rewards = [e.outcome.reward if e.outcome.scored else None for e in group]
        correct = [e.is_correct for e in group if e.trained_rows]
        rejected = s.rejection_sample and (all(correct) or not any(correct))
        # rLLM drops a rejected group's rows before verl computes any advantage: like the local trainer's
        # dropped groups, they have none
        advantages = ([None] * len(group) if rejected else
                      verl_path_advantages(group, adv_estimator=s.adv_estimator, norm_by_std=s.norm_adv_by_std_in_grpo))
        try:
            job = self._job(step)
            number = job.groups.setdefault(group_uid, len(job.groups))
            now = dt.datetime.now(dt.timezone.utc)
            for episode, advantage in zip(group, advantages):
                index = episode.rollout_index
                job.writer.add(episode_trial_record(
                    f"{step_job_name(step)}__group-{number:02d}__episode-{index}", episode, model_name=s.model_name,
                    finished_at=now, source=f"train:{s.experiment}",
                    metadata={
                        "step": step, "group": number, "episode": index, "policy_version": episode.policy_version,
                        "advantage": advantage, "trained": advantage is not None,
                        "group_rewards": rewards, "group_advantages": advantages,
                        "group_complete": complete, "rejected_by_rllm": rejected,
                        "rllm_episode_id": episode.rllm_episode_id, "rllm_group_id": group_uid,
                        "trajectory_uid": episode.trajectory_uid, "verl_rows": episode.trained_rows,
                        "advantage_source": f"recomputed as verl's compute_advantage ({s.adv_estimator}) groups "
                                            "rLLM's rows: by uid = trajectory uid",
                    },
                ))
                job.trials += 1
            self._finish_job(job)  # result.json complete after every group: a killed run leaves a readable job
        except OSError as exc:  # a full disk costs the viewer this group, never the training run
            logger.warning("could not write step %d's group %s as Harbor trials: %s", step, group_uid, exc)
            return
        keep_within_budget(self.root, s.retention.max_disk_mb, self.root / step_job_name(step))


_RECORDERS: dict[str, RllmRolloutRecorder] = {}
_RECORDERS_LOCK = threading.Lock()


def rollout_recorder_for(settings: RllmRolloutTrialsSettings | dict[str, Any]) -> RllmRolloutRecorder | None:
    """The process's recorder of ``settings.run_dir`` (made on first use, closed at exit); None when the retention
    keeps nothing (``enabled: false``)."""
    if not isinstance(settings, RllmRolloutTrialsSettings):
        settings = RllmRolloutTrialsSettings.model_validate(settings)
    if not settings.retention.enabled:
        return None
    key = str(Path(settings.run_dir).resolve())
    with _RECORDERS_LOCK:
        recorder = _RECORDERS.get(key)
        if recorder is None:
            recorder = _RECORDERS[key] = RllmRolloutRecorder(settings)
            atexit.register(recorder.close)
        return recorder


def close_rollout_recorders() -> None:
    """Finish every open job of this process (what the exit hook does)."""
    with _RECORDERS_LOCK:
        recorders = list(_RECORDERS.values())
        _RECORDERS.clear()
    for recorder in recorders:
        recorder.close()


__all__ = [
    "RllmRolloutEpisode", "RllmRolloutRecorder", "RllmRolloutTrialsSettings", "VERL_ESTIMATOR_TWINS",
    "close_rollout_recorders", "rollout_recorder_for", "rows_in_verl_batch", "verl_path_advantages",
]
