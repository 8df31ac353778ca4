"""Run many episodes concurrently: k attempts per task, a wall clock per episode, results and transcripts.

Each episode is run by the one episode engine (:mod:`terminal_agent.rollout.engine`: the wall clock by the one
deadline rule, the client wrapper, closing) in the one pool of :mod:`terminal_agent.rollout.episode_batch`
(``concurrency`` episodes at once, the retry loop, the leak sweep). The model is shared: a client that is not
thread-safe (``is_thread_safe = False``, the embedded model) is called under one lock.

Infrastructure failures (sandbox, image, provider, grading, the episode's wall clock) become
``error`` trials with their kind; they are never scored as reward 0. A trial is a view of the engine's
record (:mod:`terminal_agent.rollout.trial_records`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.interfaces import EpisodeAgent, EpisodeEnv, ModelClient
from terminal_agent.evaluation.results import RunInfo, RunResults, TrialResult
from terminal_agent.rollout.engine import EpisodeEngine
from terminal_agent.rollout.episode_batch import EpisodeJob, EpisodePool, LeakSweeper, RetryPolicy
from terminal_agent.rollout.episode_record import EpisodeRecord
from terminal_agent.rollout.transcripts import to_jsonable, transcript_path, write_transcript
from terminal_agent.rollout.trial_records import trial_from_record
from terminal_agent.sandbox.backends import wait_until_ready
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task

if TYPE_CHECKING:
    from terminal_agent.rollout.episode_spec import EpisodeSpec

__all__ = [
    "RESULTS_FILE",
    "AttemptCallback",
    "ProgressCallback",
    "TranscriptCallback",
    "RolloutConfig",
    "RolloutRunner",
    "TrialSpec",
]

logger = logging.getLogger(__name__)

RESULTS_FILE = "results.json"


class RolloutConfig(BaseModel):
    """How a batch of episodes is run."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(default=1, ge=1)
    """Attempts (episodes) per task."""
    max_steps: int = Field(default=10, ge=1)
    """Model turns per episode."""
    concurrency: int = Field(default=2, ge=1)
    """Episodes running at once (containers alive at once)."""
    episode_timeout_s: float | None = Field(default=None, gt=0)
    """Wall clock of one episode, grading included; ``None``: the task's agent + test timeouts + 60 s."""
    sampling: dict[str, Any] = Field(default_factory=dict)
    """Sampling keywords passed to every model call (``temperature``, ``max_tokens`` ...)."""
    output_dir: Path | None = None
    """Where ``results.json`` and ``transcripts/`` go; ``None`` writes nothing."""
    run_id: str = Field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6])
    """Name of the run (also passed to the sandboxes' labels when the env accepts it)."""
    sweep_leaked: bool = True
    """Remove sandboxes leaked by dead earlier runs before starting, and keep a CleanupDaemon sweeping while the run lasts."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    """Where the default env runs episodes: the sandbox backend (``docker``, ``bwrap``, ``ray``) and its settings."""
    retries: int = Field(default=0, ge=0)
    """Extra attempts of an episode flagged with a kind in ``retry_error_kinds``; the last attempt is the trial kept."""
    retry_error_kinds: list[str] = Field(default_factory=lambda: ["sandbox"])
    """Error kinds worth another attempt (a lost container or daemon); a grader timeout or a bug would only repeat."""
    retry_delay_s: float = Field(default=5.0, ge=0)
    """Wait before the first retry of an episode, doubled for each later one (a restarting daemon needs seconds)."""
    retry_wait_ready_s: float = Field(default=60.0, ge=0)
    """Before retrying a ``sandbox`` flag, wait up to this long for the sandbox backend to answer again (the docker
    backend pings its daemon): a restarting dockerd costs the retry its wait, not the retry itself. 0: no wait."""

    def episode_spec(self) -> EpisodeSpec:
        """What each episode of the run is built from: the env of ``max_steps``, ``sandbox`` and ``run_id``, the
        engine's turns, the agent's defaults and the deadline rule with the tasks' own limits."""
        from terminal_agent.env import EnvConfig
        from terminal_agent.rollout.episode_spec import EpisodeSpec

        return EpisodeSpec(env=EnvConfig(max_steps=self.max_steps, run_id=self.run_id, sandbox=self.sandbox),
                           max_steps=self.max_steps)


@dataclass(frozen=True)
class TrialSpec:
    """One episode to run."""

    task: Task
    attempt: int


@dataclass
class _TrialRun:
    """A trial being run: its spec and the trial of its latest attempt."""

    spec: TrialSpec
    trial: TrialResult | None = None


ProgressCallback = Callable[[int, int, TrialResult], None]
"""``(finished, total, trial)`` after each trial; called from the thread that called ``run``."""

AttemptCallback = Callable[[TrialSpec, TrialResult, bool], None]
"""``(spec, trial, final)`` after every attempt, retried ones included (``final`` False); from the episode's worker
thread."""

TranscriptCallback = Callable[[TrialSpec, TrialResult, dict[str, Any]], None]
"""``(spec, trial, transcript)`` after a trial's transcript is written (the eval's Harbor job writes the trial from
it); from the episode's worker thread."""


def _default_env_factory(task: Task, config: RolloutConfig) -> EpisodeEnv:
    from terminal_agent.env import DockerIsolatedEnv

    return DockerIsolatedEnv(task, config.episode_spec().env)


def _default_agent_factory(task: Task) -> EpisodeAgent:
    from terminal_agent.agent import TerminalBenchAgent

    return TerminalBenchAgent()


class RolloutRunner:
    """Runs :class:`TrialSpec` s with one shared model; see the module docstring.

    ``env_factory(task, rollout_config)`` and ``agent_factory(task)`` default to the project's DockerIsolatedEnv
    and TerminalBenchAgent. ``model_for_trial(spec)`` gives a trial its own client instead of the shared ``model``
    (oracle validation scripts one reply list per task).
    """

    def __init__(
        self,
        model: ModelClient,
        config: RolloutConfig | None = None,
        *,
        env_factory: Callable[[Task, RolloutConfig], EpisodeEnv] | None = None,
        agent_factory: Callable[[Task], EpisodeAgent] | None = None,
        on_progress: ProgressCallback | None = None,
        model_for_trial: Callable[[TrialSpec], ModelClient] | None = None,
        on_attempt: AttemptCallback | None = None,
        on_transcript: TranscriptCallback | None = None,
    ):
        self.model = model
        self.model_for_trial = model_for_trial
        self.config = config or RolloutConfig()
        self.env_factory = env_factory or _default_env_factory
        self.agent_factory = agent_factory or _default_agent_factory
        self.on_progress = on_progress
        self.on_attempt = on_attempt
        self.on_transcript = on_transcript
        self._model_lock = threading.Lock()  # used for every client that is not thread-safe (shared or per-trial)
        config = self.config
        self.spec = config.episode_spec()
        """What each episode is built from (the default env, the engine's settings, the deadline rule)."""
        self.engine = EpisodeEngine(self.spec.episode_settings(sampling=config.sampling))
        self.pool = EpisodePool(
            config.concurrency,
            RetryPolicy(
                retries=config.retries, error_kinds=frozenset(config.retry_error_kinds), delay_s=config.retry_delay_s,
                wait_ready_s=config.retry_wait_ready_s,
                wait_ready=lambda timeout_s: wait_until_ready(config.sandbox, timeout_s),
            ),
        )

    # --- public API -------------------------------------------------------------------------
    def run(self, tasks: Sequence[Task], tasks_file: str | None = None) -> RunResults:
        """Every task ``attempts`` times; writes ``results.json`` (after each trial) and transcripts."""
        specs = [TrialSpec(task, attempt) for task in tasks for attempt in range(self.config.attempts)]
        return self.run_trials(specs, tasks_file=tasks_file)

    def run_trials(
        self,
        specs: Sequence[TrialSpec],
        *,
        tasks_file: str | None = None,
        on_trial: Callable[[TrialResult], None] | None = None,
    ) -> RunResults:
        """Run the given trials (screening passes only the unfinished ones); ``on_trial`` sees each as it ends."""
        config = self.config
        sweeper = LeakSweeper(config.sweep_leaked, config=config.sandbox).start()  # long runs keep sweeping
        started_at = dt.datetime.now(dt.timezone.utc)
        started = time.monotonic()
        results = RunResults(
            run=RunInfo(
                run_id=config.run_id,
                model=self.model.name,
                tasks_file=tasks_file,
                attempts=config.attempts,
                max_steps=config.max_steps,
                concurrency=config.concurrency,
                started_at=started_at.isoformat(timespec="seconds"),
                sampling=config.sampling,
                sandbox_backend=config.sandbox.backend,
            )
        )
        jobs = [
            EpisodeJob(_TrialRun(spec), spec.task.task_id, spec.attempt, functools.partial(self._run_attempt, spec))
            for spec in specs
        ]

        def attempted(job: EpisodeJob[_TrialRun], record: EpisodeRecord, final: bool) -> None:
            trial = job.key.trial = trial_from_record(record)
            self._write_transcript(job.key.spec, trial, record)
            if self.on_attempt is not None:
                self.on_attempt(job.key.spec, trial, final)

        def done(job: EpisodeJob[_TrialRun], record: EpisodeRecord) -> None:
            trial = job.key.trial
            assert trial is not None  # attempted() saw its last attempt
            results.trials.append(trial)
            results.run.wall_s = time.monotonic() - started
            if config.output_dir is not None:
                results.write(config.output_dir / RESULTS_FILE)
            if on_trial is not None:
                on_trial(trial)
            if self.on_progress is not None:
                self.on_progress(len(results.trials), len(specs), trial)

        try:
            self.pool.run(jobs, on_attempt=attempted, on_done=done)
        finally:
            sweeper.stop()
        results.trials.sort(key=lambda t: (t.task_id, t.attempt))
        results.run.finished_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        results.run.wall_s = time.monotonic() - started
        from terminal_agent.evaluation.report import summarize

        results.summary = summarize(results)
        if config.output_dir is not None:
            results.write(config.output_dir / RESULTS_FILE)
        return results

    # --- one trial --------------------------------------------------------------------------
    def _run_attempt(self, spec: TrialSpec) -> EpisodeRecord:
        """One attempt through the engine, its wall clock the run's ``episode_timeout_s`` or the one deadline rule."""
        task = spec.task
        client = self.model_for_trial(spec) if self.model_for_trial is not None else self.model
        lock = None if getattr(client, "is_thread_safe", True) else self._model_lock
        deadline_s = self.config.episode_timeout_s
        return self.engine.run(
            lambda: self.env_factory(task, self.config), lambda: self.agent_factory(task), client,
            task_id=task.task_id, attempt=spec.attempt, lock=lock,
            deadline_s=self.spec.deadline_s(task.limits) if deadline_s is None else deadline_s,
        )

    def _write_transcript(self, spec: TrialSpec, trial: TrialResult, record: EpisodeRecord) -> None:
        output_dir = self.config.output_dir
        if output_dir is None:
            return
        path = transcript_path(output_dir, spec.task.task_id, spec.attempt)
        episode = {f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name != "model_calls"}
        transcript = {
            "task_id": spec.task.task_id,
            "attempt": spec.attempt,
            "model": self.model.name,
            "instruction": spec.task.instruction,
            "result": trial.model_dump(mode="json", exclude={"transcript"}),
            "model_calls": to_jsonable(record.model_calls),  # each call's fields, in order
            "episode": to_jsonable(episode),
            "final_observation": record.final_observation,
        }
        try:
            write_transcript(path, transcript)
            trial.transcript = str(path.relative_to(output_dir))
        except OSError as exc:
            logger.warning("could not write transcript %s: %s", path, exc)
        if self.on_transcript is not None:
            self.on_transcript(spec, trial, transcript)
