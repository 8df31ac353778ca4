"""A synchronous single-episode loop in rLLM's shape: reset -> update_from_env -> model -> step.

The engine (evaluation, both trainers, the rLLM Workflow, the benchmarks) runs it. It mirrors rLLM's ``AgentExecutionEngine``: the
agent keeps the chat, the model answers ``agent.chat_completions``, the env gets ``Action.action``,
and an episode cut by ``max_steps`` or ``max_total_tokens`` is graded via
``env.compute_final_reward()``. Provider failures end the episode as *not scored*, except a
context-window overflow after at least one turn: like rLLM's prompt truncation, that cuts the
episode (termination ``context_limit``) and it is graded on what the agent left behind. An
overflow on the very first call means the task cannot fit the model at all: not scored.

This is the loop; :mod:`terminal_agent.rollout.engine` wraps it with what every caller needs beside it (the
wall clock, retries, closing, the failure records). Callers go through the engine.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from terminal_agent.errors import InfrastructureError, error_kind
from terminal_agent.interfaces import EpisodeAgent, EpisodeEnv, ModelClient
from terminal_agent.models.base import ContextWindowExceededError
from terminal_agent.outcome import EpisodeOutcome, Termination, with_turn_tokens
from terminal_agent.rollout.episode_client import EpisodeClient
from terminal_agent.rollout.episode_record import EpisodeRecord

logger = logging.getLogger(__name__)

def final_observation_of(agent: EpisodeAgent | None) -> str | None:
    """What the env answered to the agent's last reply (the chat's last message), which no trajectory step keeps."""
    if agent is None:
        return None
    try:
        messages = agent.chat_completions
    except Exception:  # noqa: BLE001 - an agent that never reset has no chat: the record goes without it
        return None
    if len(messages) > 2 and messages[-1].get("role") == "user":
        return str(messages[-1].get("content"))
    return None


def run_episode(
    env: EpisodeEnv,
    agent: EpisodeAgent,
    model: ModelClient,
    max_steps: int,
    *,
    max_total_tokens: int | None = None,
    sampling: dict[str, Any] | None = None,
    stop_on_output_limit: bool = False,
    max_context_tokens: int | None = None,
    task: Any = None,
) -> EpisodeRecord:
    """Run one episode to the end; the env is closed whatever happens.

    ``model`` is wrapped in an :class:`EpisodeClient` unless it is one (the engine passes its own): each model
    call's token ids (when the client gives them) go on the agent's step (``agent.record_tokens``) and into
    ``outcome.turn_tokens``. ``stop_on_output_limit`` ends the episode (graded, termination ``output_limit``)
    after a reply cut by the per-turn token cap, as rLLM HEAD's workflows do. ``max_context_tokens`` ends the
    episode, graded (``context_limit``), before a call whose prompt (at least the last prompt plus its reply)
    plus the reply cap (``sampling["max_tokens"]``) would not fit the context. ``task`` (a Task or rLLM's task
    dict) is handed to ``env.reset(task=...)`` and kept as the trajectory's task; None plays the env's own task (an env whose
    sandbox was started ahead of time, by ``reset`` of that task, keeps it).
    """
    started = time.monotonic()
    client = model if isinstance(model, EpisodeClient) else EpisodeClient(model, keep_calls=False)
    task_id = _task_id_of(env, task)
    env_s = 0.0
    termination = Termination.MAX_STEPS

    def record(outcome: EpisodeOutcome) -> EpisodeRecord:
        return EpisodeRecord(
            outcome=outcome,
            texts=tuple(client.texts),
            prompt_tokens=client.prompt_tokens,
            completion_tokens=client.completion_tokens,
            model_s=client.model_time_s,
            model_wait_s=client.wait_time_s,
            env_s=env_s,
            wall_s=time.monotonic() - started,
            first_call_at=client.first_call_at,
            last_reply_at=client.last_reply_at,
            model_calls=tuple(client.calls),
            trajectory=agent.trajectory,
            final_observation=final_observation_of(agent),
        )

    turns = 0
    try:
        mark = time.monotonic()
        # None plays the env's own task: handed back as is, so an env started ahead of time keeps its sandbox
        observation, info = env.reset(task=task if task is not None else env.task)
        env_s += time.monotonic() - mark
        task_id = _task_id_of(env, task)
        agent.reset()
        if task is not None:
            agent.trajectory.task = task
        agent.update_from_env(observation, 0.0, False, info)
        done = False
        reply_cap = int((sampling or {}).get("max_tokens") or 0)
        last_length = 0
        for _ in range(max_steps):
            if max_context_tokens is not None and turns and last_length + reply_cap > max_context_tokens:
                termination = Termination.CONTEXT_LIMIT
                break
            captured = len(client.turn_tokens)
            try:
                response = client.complete(agent.chat_completions, **(sampling or {}))
            except ContextWindowExceededError:
                if turns == 0:
                    raise
                termination = Termination.CONTEXT_LIMIT
                break
            last_length = response.prompt_tokens + response.completion_tokens
            action = agent.update_from_model(response.text, finish_reason=response.finish_reason)
            if len(client.turn_tokens) > captured:
                agent.record_tokens(client.turn_tokens[-1])
            mark = time.monotonic()
            observation, _reward, done, info = env.step(action.action)
            env_s += time.monotonic() - mark
            turns += 1
            agent.update_from_env(observation, _reward, done, info)
            if done:
                break
            if stop_on_output_limit and response.finish_reason == "length":
                termination = Termination.OUTPUT_LIMIT
                break
            if max_total_tokens is not None and client.prompt_tokens + client.completion_tokens >= max_total_tokens:
                termination = Termination.MAX_TOKENS
                break
        if not done:
            mark = time.monotonic()
            env.compute_final_reward(termination)
            env_s += time.monotonic() - mark
    except InfrastructureError as exc:
        logger.warning("episode of %s ended by %s: %s", task_id, type(exc).__name__, exc)
        kind = error_kind(exc)
        return record(unscored_outcome(task_id, Termination.for_error_kind(kind), f"{type(exc).__name__}: {exc}", kind,
                                       turns=turns, client=client))
    finally:
        env.close()
    recorded = env.outcome
    if recorded is None:
        raise RuntimeError(f"the env of {task_id} ended an episode without its outcome (env.outcome is None)")
    # the env's record is the verdict; the loop adds only what the env never sees (the token ids)
    outcome = with_turn_tokens(recorded, client.turn_tokens)
    trajectory = agent.trajectory
    if trajectory is not None:
        trajectory.reward = float(outcome.reward) if outcome.trainable and outcome.reward is not None else 0.0
    return record(outcome)


def unscored_outcome(
    task_id: str, termination: Termination, error: str, kind: str | None, *, turns: int = 0,
    client: EpisodeClient | None = None,
) -> EpisodeOutcome:
    """The outcome of an episode that ended without a score (``kind``: its ``errors.error_kind`` family)."""
    tokens = tuple(client.turn_tokens) if client is not None else ()
    return EpisodeOutcome(
        task_id=task_id, termination=termination, scored=False, reward=None, error_kind=kind, error=error,
        turns=turns, turn_tokens=tokens,
    )


def _task_id_of(env: EpisodeEnv, task: Any) -> str:
    """The id of the task the env plays (before reset: the one it was made with, or the one handed over)."""
    task_id = getattr(env.task, "task_id", None) or getattr(task, "task_id", None)
    if task_id is None and isinstance(task, dict):
        task_id = task.get("task_id")
    return str(task_id or "?")


__all__ = ["EpisodeRecord", "final_observation_of", "run_episode", "unscored_outcome"]
