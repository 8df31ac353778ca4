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

import dataclasses
import inspect
import logging
import time
from dataclasses import dataclass
from typing import Any

from terminal_agent.errors import InfrastructureError, error_kind
from terminal_agent.interfaces import ModelClient
from terminal_agent.models.base import ContextWindowExceededError
from terminal_agent.outcome import EpisodeOutcome, Termination, TurnTokens

logger = logging.getLogger(__name__)


@dataclass
class EpisodeResult:
    """What one episode produced: its typed outcome, the model/env timings and the agent's trajectory."""

    outcome: EpisodeOutcome
    """How it ended (termination, scored, reward, grade, error kind, the turns' token ids)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_s: float = 0.0
    env_s: float = 0.0
    total_s: float = 0.0
    trajectory: Any = None
    """The agent's rLLM ``Trajectory``."""

    # Read-only views of the outcome, for the consumers that predate it.
    @property
    def task_id(self) -> str:
        return self.outcome.task_id

    @property
    def reward(self) -> float:
        """The reward; 0.0 when not scored (check ``scored`` first)."""
        return float(self.outcome.reward) if self.outcome.scored and self.outcome.reward is not None else 0.0

    @property
    def scored(self) -> bool:
        return self.outcome.scored

    @property
    def termination(self) -> str:
        return self.outcome.termination.value

    @property
    def turns(self) -> int:
        return self.outcome.turns

    @property
    def grade(self) -> dict[str, Any] | None:
        return self.outcome.grade

    @property
    def error(self) -> str | None:
        return self.outcome.error

    @property
    def error_kind(self) -> str | None:
        return self.outcome.error_kind

    @property
    def info(self) -> dict[str, Any]:
        """The env's final info (grade, reward parts, timings)."""
        return self.outcome.info

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _tokens_of(response: Any) -> TurnTokens | None:
    """The exact tokens of one model call, when the client reports them."""
    if response.prompt_ids is None or response.completion_ids is None:
        return None
    return TurnTokens(
        prompt_ids=list(response.prompt_ids),
        completion_ids=list(response.completion_ids),
        logprobs=list(response.logprobs) if response.logprobs is not None else None,
        finish_reason=response.finish_reason,
    )


def run_episode(
    env: Any,
    agent: Any,
    model: ModelClient,
    max_steps: int,
    *,
    max_total_tokens: int | None = None,
    sampling: dict[str, Any] | None = None,
    stop_on_output_limit: bool = False,
    max_context_tokens: int | None = None,
    task: Any = None,
) -> EpisodeResult:
    """Run one episode to the end; the env is closed whatever happens.

    Each model call's token ids (when the client gives them) go on the agent's step
    (``agent.record_tokens``) and into ``outcome.turn_tokens``. ``stop_on_output_limit`` ends the
    episode (graded, termination ``output_limit``) after a reply cut by the per-turn token cap, as
    rLLM HEAD's workflows do. ``max_context_tokens`` ends the episode, graded (``context_limit``),
    before a call whose prompt (at least the last prompt plus its reply) plus the reply cap
    (``sampling["max_tokens"]``) would not fit the context. ``task`` (a Task or rLLM's task dict) is handed to
    ``env.reset(task=...)`` and kept as the trajectory's task; None plays the env's own task.
    """
    started = time.monotonic()
    task_id = getattr(getattr(env, "task", None), "task_id", None) or "?"
    model_s = env_s = 0.0
    prompt_tokens = completion_tokens = turns = 0
    turn_tokens: list[TurnTokens] = []
    info: dict[str, Any] = {}
    termination = Termination.MAX_STEPS
    reward = 0.0

    def timings() -> dict[str, Any]:
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "model_s": model_s,
            "env_s": env_s,
            "total_s": time.monotonic() - started,
            "trajectory": getattr(agent, "trajectory", None),
        }

    try:
        mark = time.monotonic()
        observation, info = env.reset() if task is None else env.reset(task=task)
        env_s += time.monotonic() - mark
        task_id = getattr(getattr(env, "task", None), "task_id", None) or task_id
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
            mark = time.monotonic()
            try:
                response = model.complete(agent.chat_completions, **(sampling or {}))
            except ContextWindowExceededError:
                if turns == 0:
                    raise
                model_s += time.monotonic() - mark
                termination = Termination.CONTEXT_LIMIT
                break
            model_s += time.monotonic() - mark
            prompt_tokens += response.prompt_tokens
            completion_tokens += response.completion_tokens
            last_length = response.prompt_tokens + response.completion_tokens
            action = agent.update_from_model(response.text, finish_reason=response.finish_reason)
            tokens = _tokens_of(response)
            if tokens is not None:
                turn_tokens.append(tokens)
                if hasattr(agent, "record_tokens"):
                    agent.record_tokens(tokens)
            mark = time.monotonic()
            observation, reward, done, info = env.step(action.action)
            env_s += time.monotonic() - mark
            turns += 1
            agent.update_from_env(observation, reward, done, info)
            if done:
                termination = Termination.parse(info.get("termination", Termination.FINISHED.value))
                break
            if stop_on_output_limit and response.finish_reason == "length":
                termination = Termination.OUTPUT_LIMIT
                break
            if max_total_tokens is not None and prompt_tokens + completion_tokens >= max_total_tokens:
                termination = Termination.MAX_TOKENS
                break
        if not done:
            mark = time.monotonic()
            reward = _final_reward(env, termination)
            env_s += time.monotonic() - mark
            info = dict(getattr(env, "final_info", None) or {})
            info.setdefault("termination", termination.value)
    except InfrastructureError as exc:
        logger.warning("episode of %s ended by %s: %s", task_id, type(exc).__name__, exc)
        kind = error_kind(exc)
        outcome = EpisodeOutcome(
            task_id=task_id,
            termination=Termination.for_error_kind(kind),
            scored=False,
            reward=None,
            error_kind=kind,
            error=f"{type(exc).__name__}: {exc}",
            turns=turns,
            turn_tokens=turn_tokens,
        )
        return EpisodeResult(outcome, **timings())
    finally:
        env.close()
    recorded = getattr(env, "outcome", None)
    if isinstance(recorded, EpisodeOutcome):
        # the env's record is the verdict; the loop adds only what the env never sees (the token ids)
        outcome = dataclasses.replace(recorded, turn_tokens=turn_tokens)
    else:  # an env of another kind: read its info dict
        scored = bool(info.get("scored", False))
        outcome = EpisodeOutcome(
            task_id=task_id,
            termination=termination,
            scored=scored,
            reward=float(reward) if scored else None,
            error_kind=info.get("error_kind"),
            error=info.get("error"),
            turns=turns,
            turn_tokens=turn_tokens,
            grade=info.get("grade"),
            info=info,
        )
    trajectory = getattr(agent, "trajectory", None)
    if trajectory is not None:
        trajectory.reward = float(reward)
    return EpisodeResult(outcome, **timings())


def _final_reward(env: Any, termination: Termination) -> float:
    """``env.compute_final_reward``, telling our env who cut the episode (rLLM's envs take no argument)."""
    try:
        accepts = bool(inspect.signature(env.compute_final_reward).parameters)
    except (TypeError, ValueError):  # a builtin or C callable without a signature: call it plainly
        accepts = False
    return float(env.compute_final_reward(termination) if accepts else env.compute_final_reward())
