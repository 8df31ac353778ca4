"""A synchronous single-episode loop in rLLM's shape: reset -> update_from_env -> model -> step.

The async runner, the eval and the tests use it. It mirrors rLLM's ``AgentExecutionEngine``: the
agent keeps the chat, the model answers ``agent.chat_completions``, the env gets ``Action.action``,
and an episode cut by ``max_steps`` or ``max_total_tokens`` is graded via
``env.compute_final_reward()``. Provider failures end the episode as *not scored*, except a
context-window overflow after at least one turn: like rLLM's prompt truncation, that cuts the
episode (termination ``context_limit``) and it is graded on what the agent left behind. An
overflow on the very first call means the task cannot fit the model at all: not scored.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.errors import InfrastructureError, error_kind
from terminal_agent.interfaces import ModelClient
from terminal_agent.models.base import ContextWindowExceededError

logger = logging.getLogger(__name__)


@dataclass
class EpisodeResult:
    """What one episode produced."""

    task_id: str
    reward: float
    """0.0 when not scored (see ``scored``)."""
    scored: bool
    termination: str
    """finished, format_errors, max_steps, max_tokens, context_limit, agent_timeout, truncated, sandbox_error, provider_error..."""
    turns: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_s: float = 0.0
    env_s: float = 0.0
    total_s: float = 0.0
    grade: dict[str, Any] | None = None
    error: str | None = None
    error_kind: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    """The env's final info (grade, reward parts, timings)."""
    trajectory: Any = None
    """The agent's rLLM ``Trajectory``."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def run_episode(
    env: Any,
    agent: Any,
    model: ModelClient,
    max_steps: int,
    *,
    max_total_tokens: int | None = None,
    sampling: dict[str, Any] | None = None,
) -> EpisodeResult:
    """Run one episode to the end; the env is closed whatever happens."""
    started = time.monotonic()
    task_id = getattr(getattr(env, "task", None), "task_id", "?")
    model_s = env_s = 0.0
    prompt_tokens = completion_tokens = turns = 0
    info: dict[str, Any] = {}
    termination = "max_steps"
    reward = 0.0
    try:
        mark = time.monotonic()
        observation, info = env.reset()
        env_s += time.monotonic() - mark
        agent.reset()
        agent.update_from_env(observation, 0.0, False, info)
        done = False
        for _ in range(max_steps):
            mark = time.monotonic()
            try:
                response = model.complete(agent.chat_completions, **(sampling or {}))
            except ContextWindowExceededError:
                if turns == 0:
                    raise
                model_s += time.monotonic() - mark
                termination = "context_limit"
                break
            model_s += time.monotonic() - mark
            prompt_tokens += response.prompt_tokens
            completion_tokens += response.completion_tokens
            action = agent.update_from_model(response.text, finish_reason=response.finish_reason)
            mark = time.monotonic()
            observation, reward, done, info = env.step(action.action)
            env_s += time.monotonic() - mark
            turns += 1
            agent.update_from_env(observation, reward, done, info)
            if done:
                termination = info.get("termination", "done")
                break
            if max_total_tokens is not None and prompt_tokens + completion_tokens >= max_total_tokens:
                termination = "max_tokens"
                break
        if not done:
            mark = time.monotonic()
            reward = env.compute_final_reward()
            env_s += time.monotonic() - mark
            info = dict(getattr(env, "final_info", None) or {})
            info["termination"] = termination
    except InfrastructureError as exc:
        logger.warning("episode of %s ended by %s: %s", task_id, type(exc).__name__, exc)
        return EpisodeResult(
            task_id, 0.0, False, f"{exc.kind}_error", turns, prompt_tokens, completion_tokens, model_s, env_s,
            time.monotonic() - started, None, f"{type(exc).__name__}: {exc}", error_kind(exc), info,
            getattr(agent, "trajectory", None),
        )
    finally:
        env.close()
    scored = bool(info.get("scored", False))
    trajectory = getattr(agent, "trajectory", None)
    if trajectory is not None:
        trajectory.reward = float(reward)
    return EpisodeResult(
        task_id=task_id,
        reward=float(reward) if scored else 0.0,
        scored=scored,
        termination=termination,
        turns=turns,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model_s=model_s,
        env_s=env_s,
        total_s=time.monotonic() - started,
        grade=info.get("grade"),
        error=info.get("error"),
        error_kind=info.get("error_kind"),
        info=info,
        trajectory=trajectory,
    )
