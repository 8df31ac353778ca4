"""rLLM's agent/environment base types: the real ones when rllm is installed, local twins otherwise.

rLLM is not on the package registry, so the library must work without it. The local classes
have the same names, fields and method signatures as rLLM v0.2.1 (and HEAD, where
BaseAgent/BaseEnv did not change), so code written against them runs under rLLM unchanged.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

try:  # pragma: no cover - exercised only where rllm is installed
    from rllm.agents.agent import Action, BaseAgent, Step, Trajectory  # type: ignore[import-not-found]
    from rllm.environments.base.base_env import BaseEnv  # type: ignore[import-not-found]

    RLLM_AVAILABLE = True
except ImportError:
    RLLM_AVAILABLE = False

    @dataclass
    class Step:  # type: ignore[no-redef]
        """One model call and what the environment answered."""

        prompt_ids: list[int] = field(default_factory=list)
        response_ids: list[int] = field(default_factory=list)
        logprobs: list[float] = field(default_factory=list)
        chat_completions: list[dict[str, str]] = field(default_factory=list)
        observation: Any = None
        thought: str = ""
        action: Any = None
        model_response: str = ""
        model_output: Any = None
        info: dict = field(default_factory=dict)
        reward: float = 0.0
        done: bool = False
        mc_return: float = 0.0
        advantage: Any = None

        def to_dict(self) -> dict:
            return {
                "chat_completions": self.chat_completions,
                "observation": self.observation,
                "thought": self.thought,
                "action": self.action.action if isinstance(self.action, Action) else self.action,
                "model_response": self.model_response,
                "info": self.info,
                "reward": self.reward,
                "done": self.done,
                "mc_return": self.mc_return,
            }

    @dataclass
    class Action:  # type: ignore[no-redef]
        """What the agent hands to the environment (rLLM wraps the payload in ``.action``)."""

        action: Any = None

    @dataclass
    class Trajectory:  # type: ignore[no-redef]
        """The steps of one episode and its reward."""

        uid: str = field(default_factory=lambda: str(uuid.uuid4()))
        name: str = "default_traj_name"
        task: Any = None
        steps: list[Step] = field(default_factory=list)
        reward: float | None = None
        info: dict = field(default_factory=dict)

        def to_dict(self) -> dict:
            return {
                "uid": self.uid,
                "name": self.name,
                "task": self.task,
                "steps": [step.to_dict() for step in self.steps],
                "reward": None if self.reward is None else float(self.reward),
                "info": self.info,
            }

    class BaseAgent(ABC):  # type: ignore[no-redef]
        """Same surface as ``rllm.agents.agent.BaseAgent``."""

        @property
        def chat_completions(self) -> list[dict[str, str]]:
            return []

        @property
        def trajectory(self) -> Trajectory:
            return Trajectory()

        def update_from_env(self, observation: Any, reward: float, done: bool, info: dict, **kwargs: Any) -> None:
            raise NotImplementedError

        def update_from_model(self, response: str, **kwargs: Any) -> Action:
            raise NotImplementedError

        @abstractmethod
        def reset(self) -> None: ...

        def get_current_state(self) -> Step | None:
            steps = self.trajectory.steps
            return steps[-1] if steps else None

    class BaseEnv(ABC):  # type: ignore[no-redef]
        """Same surface as ``rllm.environments.base.base_env.BaseEnv``."""

        @property
        def idx(self) -> Any:
            return getattr(self, "_idx", None)

        @idx.setter
        def idx(self, value: Any) -> None:
            self._idx = value

        @abstractmethod
        def reset(self) -> tuple[dict, dict]: ...

        @abstractmethod
        def step(self, action: Any) -> tuple[Any, float, bool, dict]: ...

        def close(self) -> None:
            return None

        @staticmethod
        @abstractmethod
        def from_dict(info: dict) -> "BaseEnv": ...

        @staticmethod
        def is_multithread_safe() -> bool:
            return True


def action_payload(action: Any) -> Any:
    """The payload of an rLLM ``Action`` or the payload itself (engines pass either)."""
    return action.action if isinstance(action, Action) else action


__all__ = ["RLLM_AVAILABLE", "Action", "BaseAgent", "BaseEnv", "Step", "Trajectory", "action_payload"]
