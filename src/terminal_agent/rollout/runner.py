"""Run many episodes concurrently: k attempts per task, a wall clock per episode, results and transcripts.

Each episode is the synchronous :func:`terminal_agent.rollout.episode.run_episode` in a worker
thread; an asyncio semaphore bounds how many run at once. The model is shared: a client that
is not thread-safe (``is_thread_safe = False``, the embedded model) is called under one lock.

Infrastructure failures (sandbox, image, provider, grading, the episode's wall clock) become
``error`` trials with their kind; they are never scored as reward 0.

The metering wrapper lives in :mod:`terminal_agent.rollout.metered_model`, the making of trial
records in :mod:`terminal_agent.rollout.trial_records`; their public names are importable from here too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.interfaces import ModelClient
from terminal_agent.rollout.metered_model import MeteredModel
from terminal_agent.evaluation.results import RunInfo, RunResults, TrialResult
from terminal_agent.rollout.transcripts import to_jsonable, transcript_path, write_transcript
from terminal_agent.rollout.trial_records import (
    fill_model_metrics,
    trial_from_episode,
    trial_from_exception,
    wall_clock_trial,
)
from terminal_agent.sandbox.backends import wait_until_ready
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task

__all__ = [
    "RESULTS_FILE",
    "MeteredModel",
    "AttemptCallback",
    "ProgressCallback",
    "TranscriptCallback",
    "RolloutConfig",
    "RolloutRunner",
    "TrialSpec",
    "sweep_leaked_sandboxes",
    "trial_from_episode",
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


@dataclass(frozen=True)
class TrialSpec:
    """One episode to run."""

    task: Task
    attempt: int


ProgressCallback = Callable[[int, int, TrialResult], None]
"""``(finished, total, trial)`` after each trial; called from the event loop thread."""

AttemptCallback = Callable[[TrialSpec, TrialResult, bool], None]
"""``(spec, trial, final)`` after every attempt, retried ones included (``final`` False); from the event loop thread."""

TranscriptCallback = Callable[[TrialSpec, TrialResult, dict[str, Any]], None]
"""``(spec, trial, transcript)`` after a trial's transcript is written (the eval's Harbor job writes the trial from
it); from the episode's worker thread, or the event loop's for a trial past its wall clock."""


def _default_env_factory(task: Task, config: RolloutConfig) -> Any:
    from terminal_agent.env import DockerIsolatedEnv, EnvConfig

    return DockerIsolatedEnv(task, EnvConfig(max_steps=config.max_steps, run_id=config.run_id, sandbox=config.sandbox))


def _default_agent_factory(task: Task) -> Any:
    from terminal_agent.agent import TerminalBenchAgent

    return TerminalBenchAgent()


def _default_episode_fn() -> Callable[..., Any]:
    from terminal_agent.rollout.episode import run_episode

    return run_episode


def sweep_leaked_sandboxes() -> None:
    """Remove sandboxes leaked by dead earlier runs (only objects carrying our labels)."""
    from terminal_agent.sandbox.cleanup import sweep_leaked

    try:
        sweep_leaked()
    except Exception as exc:  # noqa: BLE001 - a failed sweep (no daemon yet) must not stop the evaluation
        logger.warning("sweeping leaked sandboxes failed: %s", exc)


@dataclass
class _TrialState:
    """What a trial's worker thread shares with the wall clock that may give up on it."""

    model: MeteredModel | None = None
    env: Any = None
    agent: Any = None
    timed_out: bool = False
    """Set when the wall clock gave up: the late thread must not overwrite the trial's transcript."""


class RolloutRunner:
    """Runs :class:`TrialSpec` s with one shared model; see the module docstring.

    ``env_factory(task, rollout_config)``, ``agent_factory(task)`` and ``episode_fn(env, agent, model,
    max_steps)`` default to the project's DockerIsolatedEnv, TerminalBenchAgent and run_episode.
    ``model_for_trial(spec)`` gives a trial its own client instead of the shared ``model``
    (oracle validation scripts one reply list per task).
    """

    def __init__(
        self,
        model: ModelClient,
        config: RolloutConfig | None = None,
        *,
        env_factory: Callable[[Task, RolloutConfig], Any] | None = None,
        agent_factory: Callable[[Task], Any] | None = None,
        episode_fn: Callable[..., Any] | None = None,
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
        self.episode_fn = episode_fn
        self.on_progress = on_progress
        self.on_attempt = on_attempt
        self.on_transcript = on_transcript
        self._model_lock = threading.Lock()  # used for every client that is not thread-safe (shared or per-trial)

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
        return asyncio.run(self.run_trials_async(specs, tasks_file=tasks_file, on_trial=on_trial))

    async def run_trials_async(
        self,
        specs: Sequence[TrialSpec],
        *,
        tasks_file: str | None = None,
        on_trial: Callable[[TrialResult], None] | None = None,
    ) -> RunResults:
        config = self.config
        cleanup_daemon = None
        if config.sweep_leaked:
            from terminal_agent.sandbox.cleanup import CleanupDaemon

            await asyncio.to_thread(sweep_leaked_sandboxes)
            # long runs keep sweeping (every SandboxConfig.cleanup_interval_s) for leaks of runs that die meanwhile
            cleanup_daemon = CleanupDaemon().start()
        if self.episode_fn is None:
            self.episode_fn = _default_episode_fn()
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
        semaphore = asyncio.Semaphore(config.concurrency)
        # Threads of timed-out episodes cannot be killed; spare workers keep the pool from starving.
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=config.concurrency * 2, thread_name_prefix="episode")
        loop = asyncio.get_running_loop()
        finished = 0

        async def one(spec: TrialSpec) -> None:
            nonlocal finished
            trial = await self._run_with_retries(loop, executor, semaphore, spec)
            results.trials.append(trial)
            finished += 1
            results.run.wall_s = time.monotonic() - started
            if config.output_dir is not None:
                results.write(config.output_dir / RESULTS_FILE)
            if on_trial is not None:
                on_trial(trial)
            if self.on_progress is not None:
                self.on_progress(finished, len(specs), trial)

        try:
            await asyncio.gather(*(one(spec) for spec in specs))
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
            if cleanup_daemon is not None:
                cleanup_daemon.stop(timeout=1.0)
        results.trials.sort(key=lambda t: (t.task_id, t.attempt))
        results.run.finished_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        results.run.wall_s = time.monotonic() - started
        from terminal_agent.evaluation.report import summarize

        results.summary = summarize(results)
        if config.output_dir is not None:
            results.write(config.output_dir / RESULTS_FILE)
        return results

    # --- one trial --------------------------------------------------------------------------
    def _deadline(self, task: Task) -> float:
        if self.config.episode_timeout_s is not None:
            return self.config.episode_timeout_s
        return task.limits.agent_timeout_s + task.limits.test_timeout_s + 60.0

    async def _run_with_retries(
        self, loop: asyncio.AbstractEventLoop, executor: concurrent.futures.Executor, semaphore: asyncio.Semaphore,
        spec: TrialSpec,
    ) -> TrialResult:
        """The trial of ``spec``: its first attempt, or the last of up to ``retries`` more after retryable flags."""
        config = self.config
        retry = 0
        while True:
            async with semaphore:
                trial = await self._run_with_deadline(loop, executor, spec)
            kind = trial.error.kind if trial.error is not None else None
            final = kind is None or kind not in config.retry_error_kinds or retry == config.retries
            if self.on_attempt is not None:
                self.on_attempt(spec, trial, final)
            if final:
                return trial
            retry += 1
            logger.warning("%s attempt %d: retrying after a %s error (retry %d of %d)",
                           spec.task.task_id, spec.attempt, kind, retry, config.retries)
            await asyncio.sleep(config.retry_delay_s * 2 ** (retry - 1))  # outside the semaphore: others go on
            if kind == "sandbox" and config.retry_wait_ready_s > 0:
                await loop.run_in_executor(None, wait_until_ready, config.sandbox, config.retry_wait_ready_s)

    async def _run_with_deadline(
        self, loop: asyncio.AbstractEventLoop, executor: concurrent.futures.Executor, spec: TrialSpec
    ) -> TrialResult:
        state = _TrialState()
        deadline = self._deadline(spec.task)
        started = time.monotonic()
        future = loop.run_in_executor(executor, self._run_episode_sync, spec, state)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout=deadline)
        except asyncio.TimeoutError:
            state.timed_out = True
            logger.warning("%s attempt %d passed its %.0f s wall clock; closing its sandbox", spec.task.task_id, spec.attempt, deadline)
            if state.env is not None:
                await asyncio.to_thread(_close_quietly, state.env)
            trial = wall_clock_trial(spec.task.task_id, spec.attempt, deadline, time.monotonic() - started)
            if state.model is not None:
                fill_model_metrics(trial, state.model)
            self._write_transcript(spec, trial, state.model, None, state.agent)
            return trial

    def _run_episode_sync(self, spec: TrialSpec, state: _TrialState) -> TrialResult:
        task = spec.task
        started = time.monotonic()
        client = self.model_for_trial(spec) if self.model_for_trial is not None else self.model
        lock = None if getattr(client, "is_thread_safe", True) else self._model_lock
        metered = state.model = MeteredModel(client, lock, dict(self.config.sampling))
        episode: Any = None
        trial: TrialResult
        try:
            env = state.env = self.env_factory(task, self.config)
            agent = state.agent = self.agent_factory(task)
            episode_fn = self.episode_fn if self.episode_fn is not None else _default_episode_fn()
            episode = episode_fn(env, agent, metered, self.config.max_steps)
            trial = trial_from_episode(task.task_id, spec.attempt, episode)
        except Exception as exc:  # noqa: BLE001 - a broken rollout is data, never a crash of the batch
            trial = trial_from_exception(task.task_id, spec.attempt, exc)
            logger.warning("%s attempt %d: %s error: %s", task.task_id, spec.attempt,
                           trial.error.kind if trial.error is not None else "unknown", exc)
        finally:
            if state.env is not None:
                _close_quietly(state.env)
        trial.wall_s = time.monotonic() - started
        fill_model_metrics(trial, metered)
        if trial.env_time_s <= 0.0:
            trial.env_time_s = max(0.0, trial.wall_s - metered.model_time_s - metered.wait_time_s)
        if not state.timed_out:
            self._write_transcript(spec, trial, metered, episode, state.agent)
        return trial

    def _write_transcript(
        self, spec: TrialSpec, trial: TrialResult, metered: MeteredModel | None, episode: Any, agent: Any = None
    ) -> None:
        output_dir = self.config.output_dir
        if output_dir is None:
            return
        path = transcript_path(output_dir, spec.task.task_id, spec.attempt)
        transcript = {
            "task_id": spec.task.task_id,
            "attempt": spec.attempt,
            "model": self.model.name,
            "instruction": spec.task.instruction,
            "result": trial.model_dump(mode="json", exclude={"transcript"}),
            "model_calls": to_jsonable(metered.calls if metered else []),  # each call's fields, in order
            "episode": to_jsonable(episode),
            "final_observation": _final_observation(agent),
        }
        try:
            write_transcript(path, transcript)
            trial.transcript = str(path.relative_to(output_dir))
        except OSError as exc:
            logger.warning("could not write transcript %s: %s", path, exc)
        if self.on_transcript is not None:
            self.on_transcript(spec, trial, transcript)


def _final_observation(agent: Any) -> str | None:
    """What the env answered to the agent's last reply (the chat's last message; the trajectory's steps keep each
    reply's preceding observation only)."""
    try:
        messages = agent.chat_completions if agent is not None else []
    except Exception:  # noqa: BLE001 - an agent of another kind (or one that never reset): the transcript goes without it
        return None
    if len(messages) > 2 and messages[-1].get("role") == "user":
        return str(messages[-1].get("content"))
    return None


def _close_quietly(env: Any) -> None:
    try:
        env.close()
    except Exception as exc:  # noqa: BLE001 - close must never mask the episode's outcome
        logger.debug("env.close() raised %s", exc)
