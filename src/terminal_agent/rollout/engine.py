"""The one episode engine: evaluation, the local trainer, the rLLM Workflow and the benchmarks run episodes here.

Around the loop (:func:`terminal_agent.rollout.episode.run_episode`) it owns what every caller needs and used to
write for itself:

* **the client wrapper** (:class:`~terminal_agent.rollout.episode_client.EpisodeClient`): one lock for a client
  that is not thread-safe, a seed per call, metering, each reply's text and token ids;
* **the wall clock**: past ``deadline_s`` (the one rule: :func:`episode_deadline_s`) the engine closes the
  episode's sandbox (its commands die with it) and returns at once an ``episode_timeout`` record, not scored; the
  late thread's result is thrown away;
* **closing**: the env is closed whatever happened (the loop closes it; a failed start or a wall clock too);
* **failures as records**: an exception that escapes the loop (a failed sandbox start, a bug) becomes an unscored
  record of its :func:`~terminal_agent.errors.error_kind`, never reward 0; ``fatal`` names the exceptions that
  must stop the caller instead (a trainer's policy client without token ids).

Every attempt ends as one frozen :class:`~terminal_agent.rollout.episode_record.EpisodeRecord`. What a batch of
episodes needs around it (the retry loop, the pool, the leak policy) is in
:mod:`terminal_agent.rollout.episode_batch`.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import error_kind
from terminal_agent.interfaces import EpisodeAgent, EpisodeEnv, ModelClient
from terminal_agent.outcome import Termination
from terminal_agent.rollout.episode import final_observation_of, run_episode, unscored_outcome
from terminal_agent.rollout.episode_client import EpisodeClient
from terminal_agent.rollout.episode_record import EpisodeRecord

if TYPE_CHECKING:
    from terminal_agent.tasks.model import TaskLimits

logger = logging.getLogger(__name__)

GRADING_MARGIN_S = 60.0
"""What the wall clock of an episode adds past its agent and test time limits (start, teardown, slow steps)."""


def episode_deadline_s(limits: TaskLimits, *, agent_budget_s: float | None = None) -> float:
    """The one deadline rule: the wall clock of one episode of a task with ``limits``, grading included.

    It is a backstop, meant to fire only for a hung episode: the env's own agent time limit ends a slow episode
    first, *graded* (termination ``agent_timeout``), then grading has its ``test_timeout_s``. ``agent_budget_s`` is a
    caller's own agent time limit (the local trainer's ``trajectory_timeout_s``), which the env applies when it is
    the shorter: the wall clock allows the longer of the two.
    """
    agent_s = limits.agent_timeout_s if agent_budget_s is None else max(agent_budget_s, limits.agent_timeout_s)
    return agent_s + limits.test_timeout_s + GRADING_MARGIN_S


@dataclass(frozen=True)
class EpisodeSettings:
    """How the engine runs each episode."""

    max_steps: int
    """Model turns per episode."""
    sampling: Mapping[str, Any] = field(default_factory=dict)
    """Keywords of every model call (``temperature``, ``max_tokens`` ...)."""
    max_total_tokens: int | None = None
    """The episode's token budget (prompts and replies); past it the episode is cut and graded."""
    max_context_tokens: int | None = None
    """The context window: a call that would not fit cuts the episode (graded, ``context_limit``)."""
    stop_on_output_limit: bool = False
    """End the episode (graded, ``output_limit``) after a reply cut by ``sampling["max_tokens"]``."""
    deadline_s: float | None = None
    """The wall clock of one episode, grading included (a caller may give each task its own); None: none."""
    require_tokens: bool = False
    """Refuse a reply without token ids and logprobs (a trainer's policy client)."""
    keep_calls: bool = True
    """Keep each call's chat and response on the record (transcripts)."""
    fatal: tuple[type[BaseException], ...] = ()
    """Exceptions that stop the caller instead of becoming an unscored record."""


@dataclass
class EpisodeHandle:
    """The parts of a running episode, for a caller that wants to see them while it runs (a transcript writer)."""

    env: EpisodeEnv | None = None
    agent: EpisodeAgent | None = None
    client: EpisodeClient | None = None
    timed_out: threading.Event = field(default_factory=threading.Event)


EnvMaker = Callable[[], EpisodeEnv]
AgentMaker = Callable[[], EpisodeAgent]


class EpisodeEngine:
    """Runs episodes under one :class:`EpisodeSettings`; see the module docstring."""

    def __init__(self, settings: EpisodeSettings):
        self.settings = settings

    def run(
        self,
        make_env: EnvMaker,
        make_agent: AgentMaker,
        client: ModelClient,
        *,
        task_id: str,
        attempt: int = 0,
        task: Any = None,
        lock: threading.Lock | None = None,
        seed: int | None = None,
        deadline_s: float | None = None,
        handle: EpisodeHandle | None = None,
    ) -> EpisodeRecord:
        """One attempt: ``make_env()`` and ``make_agent()`` (called inside the wall clock), the loop, the record.

        ``task`` is handed to ``env.reset(task=...)`` (None: the env's own). ``deadline_s`` overrides the settings'
        wall clock for this episode. ``handle`` is filled with the episode's parts as they are made.
        """
        handle = handle or EpisodeHandle()
        settings = self.settings
        handle.client = EpisodeClient(
            client, lock=lock, seed=seed, require_tokens=settings.require_tokens, keep_calls=settings.keep_calls
        )
        deadline = deadline_s if deadline_s is not None else settings.deadline_s
        started = time.monotonic()
        if deadline is None:
            record = self._attempt(make_env, make_agent, task_id, task, handle, started)
        else:
            record = self._attempt_with_deadline(make_env, make_agent, task_id, task, handle, started, deadline)
        return dataclasses.replace(record, attempt=attempt, wall_s=time.monotonic() - started)

    # --- one attempt ------------------------------------------------------------------------
    def _attempt(
        self, make_env: EnvMaker, make_agent: AgentMaker, task_id: str, task: Any, handle: EpisodeHandle,
        started: float,
    ) -> EpisodeRecord:
        settings = self.settings
        client = handle.client
        assert client is not None  # run() made it
        try:
            env = handle.env = make_env()
            if handle.timed_out.is_set():  # the wall clock passed while the sandbox started
                close_quietly(env)
            agent = handle.agent = make_agent()
            return run_episode(
                env, agent, client, settings.max_steps, task=task,
                max_total_tokens=settings.max_total_tokens, sampling=dict(settings.sampling),
                stop_on_output_limit=settings.stop_on_output_limit, max_context_tokens=settings.max_context_tokens,
            )
        except settings.fatal:
            raise
        except Exception as exc:  # noqa: BLE001 - one broken episode is data, never a crash of the batch
            kind = error_kind(exc)
            if kind == "format":  # the agent handles the model's format errors itself: one escaping is a bug
                kind = "internal"
            logger.warning("%s: %s error: %s: %s", task_id, kind, type(exc).__name__, exc)
            return self._failed(task_id, Termination.for_error_kind(kind), f"{type(exc).__name__}: {exc}", kind,
                                handle, started)
        finally:
            close_quietly(handle.env)

    def _attempt_with_deadline(
        self, make_env: EnvMaker, make_agent: AgentMaker, task_id: str, task: Any, handle: EpisodeHandle,
        started: float, deadline: float,
    ) -> EpisodeRecord:
        box: list[EpisodeRecord] = []
        errors: list[BaseException] = []
        finished = threading.Event()

        def body() -> None:
            try:
                box.append(self._attempt(make_env, make_agent, task_id, task, handle, started))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
                errors.append(exc)
            finally:
                finished.set()

        worker = threading.Thread(target=body, name=f"episode-{task_id}", daemon=True)
        worker.start()
        if finished.wait(deadline):
            if errors:
                raise errors[0]
            return box[0]
        handle.timed_out.set()
        logger.warning("%s passed its %.0f s wall clock; closing its sandbox", task_id, deadline)
        close_quietly(handle.env)  # the episode's commands die with it; the late thread's result is dropped
        return self._failed(task_id, Termination.EPISODE_TIMEOUT, f"episode passed its wall clock of {deadline:.0f} s",
                            "timeout", handle, started)

    @staticmethod
    def _failed(
        task_id: str, termination: Termination, error: str, kind: str, handle: EpisodeHandle, started: float
    ) -> EpisodeRecord:
        """The record of an attempt that ended without the loop's own: what the client saw so far."""
        client = handle.client
        assert client is not None
        return EpisodeRecord(
            outcome=unscored_outcome(task_id, termination, error, kind, turns=len(client.texts), client=client),
            texts=tuple(client.texts),
            prompt_tokens=client.prompt_tokens,
            completion_tokens=client.completion_tokens,
            model_s=client.model_time_s,
            model_wait_s=client.wait_time_s,
            wall_s=time.monotonic() - started,
            first_call_at=client.first_call_at,
            last_reply_at=client.last_reply_at,
            model_calls=tuple(client.calls),
            trajectory=_trajectory_of(handle.agent),
            final_observation=final_observation_of(handle.agent),
        )


def _trajectory_of(agent: EpisodeAgent | None) -> Any:
    if agent is None:
        return None
    try:
        return agent.trajectory
    except Exception:  # noqa: BLE001 - an agent that never reset has no trajectory: the record goes without it
        return None


def close_quietly(env: EpisodeEnv | None) -> None:
    """``env.close()``; what it raises is logged, never allowed to mask the episode's outcome."""
    if env is None:
        return
    try:
        env.close()
    except Exception as exc:  # noqa: BLE001 - closing must never mask the episode's outcome
        logger.debug("env.close() raised %s", exc)


__all__ = [
    "GRADING_MARGIN_S",
    "EpisodeEngine",
    "EpisodeHandle",
    "EpisodeSettings",
    "close_quietly",
    "episode_deadline_s",
]
