"""The batch around the episode engine: the retry loop, the pool and the leak policy, each written once.

:class:`~terminal_agent.rollout.engine.EpisodeEngine` runs one attempt of one episode (its wall clock, from the one
deadline rule :func:`~terminal_agent.rollout.engine.episode_deadline_s`, included). Every caller that runs many
uses the parts here:

* **the retry loop** (:func:`run_with_retries` under a :class:`RetryPolicy`): an episode that failed with a kind
  worth another attempt (a lost container) runs again, after a back-off and a bounded wait for the sandbox
  backend; the last attempt is the one kept, each attempt is seen by the caller;
* **the pool** (:class:`EpisodePool`): ``concurrency`` attempts at once on worker threads, each episode's attempts
  under the retry loop, the back-off holding no slot; each finished episode handed back on the calling thread;
* **the leak policy** (:class:`LeakSweeper`): what dead runs leaked is swept when a run starts, then a
  cleanup daemon keeps sweeping until it ends.

Users: evaluation's ``RolloutRunner`` (pool, retry loop, sweeper); the local trainer's ``LocalRolloutCollector``
(pool, retry loop) and ``train_local`` (sweeper); rLLM's ``TerminalTaskWorkflow`` (the retry loop, on rLLM's own
executor: rLLM runs the batch) and verl's launch (sweeper).
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from terminal_agent.rollout.episode_record import EpisodeRecord

if TYPE_CHECKING:
    from terminal_agent.sandbox.config import SandboxConfig

logger = logging.getLogger(__name__)

JobKey = TypeVar("JobKey")


@dataclass(frozen=True)
class RetryPolicy:
    """Which failed episodes earn another attempt, and how long to wait first."""

    retries: int = 0
    """Extra attempts of an episode that failed with a kind in ``error_kinds``; the last attempt is the one kept."""
    error_kinds: frozenset[str] = frozenset({"sandbox"})
    """Error kinds worth another attempt (a lost container or daemon); a grader timeout or a bug would only repeat."""
    delay_s: float = 5.0
    """Wait before the first retry, doubled for each later one (a restarting daemon needs seconds)."""
    wait_ready_s: float = 0.0
    """Before retrying a ``sandbox`` failure, wait up to this long for the backend to answer again (0: no wait)."""
    wait_ready: Callable[[float], object] | None = None
    """How to wait for the backend (the sandbox backend's ``wait_until_ready``); None: no wait."""

    def wants_retry(self, record: EpisodeRecord, retries_done: int) -> bool:
        """Whether ``record`` (after ``retries_done`` retries) earns another attempt."""
        kind = None if record.scored else record.error_kind
        return kind is not None and kind in self.error_kinds and retries_done < self.retries

    def delay_before(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first)."""
        return float(self.delay_s * 2.0 ** (retry - 1))

    def wait_for_backend(self, record: EpisodeRecord) -> None:
        """After a ``sandbox`` failure, wait (bounded) for the backend to answer again."""
        if record.error_kind == "sandbox" and self.wait_ready is not None and self.wait_ready_s > 0:
            self.wait_ready(self.wait_ready_s)


def run_with_retries(
    run_attempt: Callable[[], EpisodeRecord],
    policy: RetryPolicy,
    *,
    task_id: str,
    attempt: int = 0,
    on_attempt: Callable[[EpisodeRecord, bool], None] | None = None,
    sleep: Callable[[float], object] = time.sleep,
) -> EpisodeRecord:
    """The one retry loop: ``run_attempt()``, again while ``policy`` wants it; the last record is the one kept.

    Each record carries its retry count (``retries``); ``on_attempt(record, final)`` sees every attempt, retried
    ones included. The back-off and the wait for the backend happen here, outside whatever ``run_attempt`` holds
    (a slot of the pool), so the batch's other episodes go on meanwhile. ``attempt`` only names the episode in
    the log.
    """
    retries = 0
    while True:
        record = replace(run_attempt(), retries=retries)
        final = not policy.wants_retry(record, retries)
        if on_attempt is not None:
            on_attempt(record, final)
        if final:
            return record
        retries += 1
        logger.warning("%s attempt %d: retrying after a %s error (retry %d of %d)",
                       task_id, attempt, record.error_kind, retries, policy.retries)
        sleep(policy.delay_before(retries))
        policy.wait_for_backend(record)


@dataclass(frozen=True)
class EpisodeJob(Generic[JobKey]):
    """One episode of a batch."""

    key: JobKey
    """The caller's name for the episode (a trial spec, a group and attempt), handed back with its record."""
    task_id: str
    """The task's id (for the log)."""
    attempt: int
    """Which attempt of the task the episode is (for the log)."""
    run: Callable[[], EpisodeRecord]
    """One attempt through the engine; called again for each retry."""


class EpisodePool:
    """The one pool of a batch: at most ``concurrency`` attempts at once, on worker threads, each episode's attempts
    under :func:`run_with_retries` with ``retry``.

    A retry's back-off holds no slot: when the policy retries at all, the pool keeps as many spare workers again,
    which start other episodes meanwhile. The threads of an episode past its wall clock are the engine's, not the
    pool's: a worker is free again as soon as the engine returns.
    """

    def __init__(self, concurrency: int, retry: RetryPolicy | None = None, *, name: str = "episode"):
        if concurrency < 1:
            raise ValueError(f"EpisodePool: concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.name = name

    def run(
        self,
        jobs: Sequence[EpisodeJob[JobKey]],
        *,
        on_attempt: Callable[[EpisodeJob[JobKey], EpisodeRecord, bool], None] | None = None,
        on_done: Callable[[EpisodeJob[JobKey], EpisodeRecord], None] | None = None,
    ) -> list[EpisodeRecord]:
        """Every job's final record, in the order of ``jobs``.

        ``on_attempt(job, record, final)`` runs on the episode's worker thread after each attempt (retried ones
        included); ``on_done(job, record)`` runs on the calling thread as each episode ends. What a job raises (the
        engine's ``fatal`` exceptions) or a callback raises stops the batch: the episodes not started are
        cancelled, those running are waited for, and it propagates.
        """
        slots = threading.BoundedSemaphore(self.concurrency)

        def one(job: EpisodeJob[JobKey]) -> EpisodeRecord:
            def attempt() -> EpisodeRecord:
                with slots:
                    return job.run()

            seen = None if on_attempt is None else functools.partial(on_attempt, job)
            return run_with_retries(attempt, self.retry, task_id=job.task_id, attempt=job.attempt, on_attempt=seen)

        workers = self.concurrency * 2 if self.retry.retries > 0 else self.concurrency
        records: dict[int, EpisodeRecord] = {}
        executor = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=self.name)
        try:
            futures = {executor.submit(one, job): index for index, job in enumerate(jobs)}
            for future in concurrent.futures.as_completed(futures):
                index = futures[future]
                records[index] = future.result()
                if on_done is not None:
                    on_done(jobs[index], records[index])
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
        return [records[index] for index in range(len(jobs))]


class LeakSweeper:
    """The one leak policy of a run: ``start`` sweeps what dead runs leaked, then keeps a cleanup daemon sweeping
    (every ``config.cleanup_interval_s``) until ``stop``; disabled, it does nothing.

    ``config`` is the run's sandbox settings (where the backends keep their state); None: the defaults.
    """

    def __init__(self, enabled: bool = True, *, config: SandboxConfig | None = None):
        self.enabled = enabled
        self.config = config
        self._daemon: Any = None

    def start(self) -> "LeakSweeper":
        if self.enabled and self._daemon is None:
            from terminal_agent.sandbox.cleanup import CleanupDaemon, sweep_leaked

            try:
                sweep_leaked(self.config)  # every registered backend; one not reachable here is skipped
            except Exception as exc:  # noqa: BLE001 - a failed sweep (no daemon yet) must not stop the run
                logger.warning("sweeping leaked sandboxes failed: %s", exc)
            self._daemon = CleanupDaemon(config=self.config).start()
        return self

    def stop(self) -> None:
        daemon, self._daemon = self._daemon, None
        if daemon is not None:
            daemon.stop(timeout=1.0)

    def __enter__(self) -> "LeakSweeper":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "EpisodeJob",
    "EpisodePool",
    "LeakSweeper",
    "RetryPolicy",
    "run_with_retries",
]
