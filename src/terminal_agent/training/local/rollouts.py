"""Rollouts of the local trainer: groups of n concurrent episodes per task, through the real agent,
env (the configured sandbox backend: Docker, bwrap, ...) and grader, sampled from the current policy, each turn's tokens kept.

One step's groups run together: all ``group_size`` attempts of every task of the step are
submitted to one thread pool (``episodes_at_once`` containers alive at once); their model calls
reach the batched sampler at about the same time and decode together.

Faults, each named in the step's record and never trained on as the model's failure:

* a task whose image cannot be built or found is skipped with a message (``skipped``), the step
  goes on with the other tasks;
* an episode that raises or passes its wall clock becomes an untrainable outcome (masked).

Each episode runs through the one episode engine (:mod:`terminal_agent.rollout.engine`) in the one pool of
:mod:`terminal_agent.rollout.episode_batch`: the engine's client wrapper keeps every turn's token ids (and refuses a
client that gives none), its wall clock is the one deadline rule (a backstop past the preset's
``trajectory_timeout_s``), and each episode is one frozen :class:`~terminal_agent.rollout.episode_record.EpisodeRecord`.

Sandboxes started ahead of time: ``prepare(tasks, step)`` starts the envs of a step's first
``episodes_at_once`` episodes in the background (the trainer calls it for step k+1 while step k's update
runs), so the next step's first model calls do not wait for sandboxes. ``collect`` takes a prepared env
when there is one (its agent clock starts when the episode does); one whose start failed is started again
in the episode, and prepared envs that no episode takes are closed (``discard_prepared``).
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from terminal_agent.errors import ConfigError, ImageError
from terminal_agent.interfaces import EpisodeEnv, ModelClient
from terminal_agent.outcome import EpisodeOutcome
from terminal_agent.rollout.engine import EpisodeEngine, close_quietly
from terminal_agent.rollout.episode_batch import EpisodeJob, EpisodePool
from terminal_agent.rollout.episode_record import EpisodeRecord
from terminal_agent.tasks.model import Task
from terminal_agent.training.local.config import LocalTrainingConfig

logger = logging.getLogger(__name__)


@dataclass
class RolloutBatch:
    """The groups of one step (one group per task that ran) and what was skipped."""

    groups: list[list[EpisodeRecord]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """task id -> why it did not run (image build failure)."""
    wall_s: float = 0.0
    started_at: float = 0.0
    """``time.monotonic()`` when the step's rollouts began."""

    def head_and_tail_s(self) -> tuple[float | None, float | None]:
        """Seconds from the rollouts' start to the first model call, and from the last reply to their end:
        the rollout time in which the policy can have nothing to sample (sandboxes starting, last
        commands and grading)."""
        records = [r for g in self.groups for r in g]
        firsts = [r.first_call_at for r in records if r.first_call_at is not None]
        lasts = [r.last_reply_at for r in records if r.last_reply_at is not None]
        if not firsts or not lasts:
            return None, None
        return min(firsts) - self.started_at, self.started_at + self.wall_s - max(lasts)

    @property
    def outcomes(self) -> list[list[EpisodeOutcome]]:
        return [[r.outcome for r in g] for g in self.groups]


def episode_seed(seed: int, step: int, task_id: str, attempt: int) -> int:
    """A sampling seed per episode, stable across runs and resumes."""
    digest = hashlib.sha256(f"{seed}|{step}|{task_id}|{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


EnvFactory = Callable[[Task, LocalTrainingConfig, str], EpisodeEnv]


def default_env_factory(task: Task, config: LocalTrainingConfig, run_id: str) -> EpisodeEnv:
    """The env of ``config``'s episode spec (its whole env section), labelled ``run_id``; the spec's ``timeout`` is
    the task's agent time limit where it is the shorter (the preset's episode budget, graded by the env)."""
    from terminal_agent.env import DockerIsolatedEnv

    spec = config.episode
    if spec.timeout is not None and spec.timeout < task.limits.agent_timeout_s:
        task = task.model_copy(update={"limits": task.limits.model_copy(update={"agent_timeout_s": spec.timeout})})
    return DockerIsolatedEnv(task, spec.env_config(run_id=run_id))


def default_image_builder(task: Task, config: LocalTrainingConfig | None = None) -> None:
    """Make ``task``'s image available to the configured backend: built (or found) under Docker,
    looked up in the export under bwrap. An ``ImageError`` says why not."""
    from terminal_agent.sandbox.backends import resolve_task_image
    from terminal_agent.sandbox.config import SandboxConfig

    resolve_task_image(config.episode.env.sandbox if config is not None else SandboxConfig(), task)


class LocalRolloutCollector:
    """Runs the groups of a step against the policy client; see the module docstring."""

    def __init__(
        self,
        client: ModelClient,
        config: LocalTrainingConfig,
        *,
        run_id: str,
        env_factory: EnvFactory = default_env_factory,
        image_builder: Callable[[Task], None] | None = None,
        client_for: Callable[[Task, int], ModelClient] | None = None,
    ):
        """``client_for(task, attempt)`` gives an episode its own client (demonstrations) instead of ``client``;
        ``image_builder(task)`` defaults to :func:`default_image_builder` for ``config``'s sandbox backend."""
        self.client = client
        self.client_for = client_for
        self.config = config
        self.run_id = run_id
        self.env_factory = env_factory
        self.image_builder = image_builder or functools.partial(default_image_builder, config=config)
        self.spec = config.episode
        """What each episode is built from (the env, the agent, the engine's settings, the deadline)."""
        self.engine = EpisodeEngine(self.spec.episode_settings(
            sampling={"temperature": config.temperature, "top_p": config.top_p},
            stop_on_output_limit=True,  # as rLLM HEAD's workflow (and ours on the verl path) does
            require_tokens=True,  # the trainer never re-tokenizes: a client without token ids is a setup error
            keep_calls=False,
            fatal=(ConfigError,),
        ))
        self.pool = EpisodePool(config.episodes_at_once, name="local-episode")
        """The step's episodes, ``episodes_at_once`` at a time (no retries: an unscored episode is masked)."""
        self._images_ok: dict[str, str | None] = {}
        self._prepared: dict[tuple[int, str, int], concurrent.futures.Future[EpisodeEnv | None]] = {}
        self._prepare_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.prepared_taken = 0
        """Episodes that started in a sandbox prepared ahead of time (over the collector's life)."""
        self.prepared_failed = 0
        """Prepared starts that failed (their episodes started a sandbox again themselves)."""

    def _image_problem(self, task: Task) -> str | None:
        """None when the task's image is there (built now if needed), else why not (cached per task)."""
        if task.task_id not in self._images_ok:
            try:
                self.image_builder(task)
                self._images_ok[task.task_id] = None
            except ImageError as exc:
                self._images_ok[task.task_id] = f"{type(exc).__name__}: {exc}"
                logger.warning("skipping task %s: its image could not be built: %s", task.task_id, exc)
        return self._images_ok[task.task_id]

    def prepare(self, tasks: Sequence[Task], step: int) -> int:
        """Start, in the background, the sandboxes of the first ``episodes_at_once`` episodes that
        ``collect(tasks, step)`` will run; returns how many were submitted. Returns at once.

        Envs prepared earlier and not taken are closed first, so at most ``episodes_at_once`` sandboxes wait.
        """
        self.discard_prepared()
        if self._prepare_pool is None:
            self._prepare_pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=self.config.episodes_at_once, thread_name_prefix="local-prepare"
            )
        budget = self.config.episodes_at_once
        for task in tasks:
            for attempt in range(self.config.group_size):
                if budget <= 0:
                    return len(self._prepared)
                self._prepared[(step, task.task_id, attempt)] = self._prepare_pool.submit(self._start_env, task)
                budget -= 1
        return len(self._prepared)

    def _start_env(self, task: Task) -> EpisodeEnv | None:
        """An env of ``task`` with its sandbox started (``reset``), or None when the task's image is missing."""
        if self._image_problem(task) is not None:
            return None
        env = self.env_factory(task, self.config, self.run_id)
        try:
            env.reset(task=env.task)  # the episode's reset of the env's own task takes this sandbox
        except BaseException:
            close_quietly(env)
            raise
        return env

    def _take_prepared(self, task: Task, attempt: int, step: int) -> EpisodeEnv | None:
        """The env prepared for this episode (waiting for its start), or None."""
        future = self._prepared.pop((step, task.task_id, attempt), None)
        if future is None:
            return None
        try:
            env = future.result()
        except Exception as exc:  # noqa: BLE001 - a failed early start is retried by the episode itself
            self.prepared_failed += 1
            logger.info("%s attempt %d: its sandbox started ahead of time failed (%s: %s); starting it again",
                        task.task_id, attempt, type(exc).__name__, exc)
            return None
        if env is not None:
            self.prepared_taken += 1
        return env

    def discard_prepared(self) -> None:
        """Close every prepared env that no episode took (waits for starts still running)."""
        pending, self._prepared = self._prepared, {}
        for future in pending.values():
            try:
                env = future.result()
            except Exception:  # noqa: BLE001 - a start that failed left nothing to close
                continue
            close_quietly(env)

    def close(self) -> None:
        """Close what was prepared and stop the preparing threads."""
        self.discard_prepared()
        if self._prepare_pool is not None:
            self._prepare_pool.shutdown(wait=True)
            self._prepare_pool = None

    def collect(
        self,
        tasks: Sequence[Task],
        step: int,
        *,
        on_episode: Callable[[EpisodeRecord], None] | None = None,
        on_group: Callable[[int, list[EpisodeRecord]], None] | None = None,
    ) -> RolloutBatch:
        """``group_size`` episodes of every task of ``tasks`` (order kept: one group per task that ran).

        ``on_group(g, records)`` is called, on the calling thread, as soon as group ``g`` (the index
        in the returned batch) has all its episodes, while the other episodes still run: the trainer
        starts the group's forward and backward passes there. It is called once for every group.
        """
        started = time.monotonic()
        batch = RolloutBatch(started_at=started)
        runnable: list[Task] = []
        for task in tasks:
            problem = self._image_problem(task)
            if problem is None:
                runnable.append(task)
            else:
                batch.skipped[task.task_id] = problem
        n = self.config.group_size
        finished = [0] * len(runnable)
        jobs = [
            EpisodeJob((g, attempt), task.task_id, attempt, functools.partial(self._run_one, task, attempt, step))
            for g, task in enumerate(runnable)
            for attempt in range(n)
        ]
        records: dict[tuple[int, int], EpisodeRecord] = {}

        def done(job: EpisodeJob[tuple[int, int]], record: EpisodeRecord) -> None:
            g, _attempt = job.key
            records[job.key] = record
            finished[g] += 1
            if on_episode is not None:
                on_episode(record)
            if on_group is not None and finished[g] == n:
                on_group(g, [records[(g, a)] for a in range(n)])

        try:
            ran = self.pool.run(jobs, on_done=done)  # the engine makes every failure a record, except ConfigError
        finally:
            self.discard_prepared()  # prepared for episodes this step did not run (a skipped task)
        batch.groups = [ran[g * n:(g + 1) * n] for g in range(len(runnable))]
        batch.wall_s = time.monotonic() - started
        return batch

    def _run_one(self, task: Task, attempt: int, step: int) -> EpisodeRecord:
        from terminal_agent.agent import TerminalBenchAgent

        config, spec = self.config, self.spec
        client = self.client_for(task, attempt) if self.client_for is not None else self.client
        return self.engine.run(
            # the backstop covers a prepared start still running, too
            lambda: self._take_prepared(task, attempt, step) or self.env_factory(task, config, self.run_id),
            lambda: TerminalBenchAgent(spec.agent_config(training=True)),  # replies verbatim, compaction off
            client,
            task_id=task.task_id,
            attempt=attempt,
            seed=episode_seed(config.seed, step, task.task_id, attempt),
            deadline_s=spec.deadline_s(task.limits),
        )


__all__ = [
    "LocalRolloutCollector",
    "RolloutBatch",
    "episode_seed",
]
