"""rLLM's agent/environment base types: the real ones when rllm is installed, local twins otherwise.

rLLM is not on the package registry, so the library must work without it. The local classes
have the same names, fields and method signatures as rLLM v0.2.1 (and HEAD, where
BaseAgent/BaseEnv did not change), so code written against them runs under rLLM unchanged.

The twins are used only when no ``rllm`` package is installed at all. An installed rllm whose
import fails (a missing transitive package, a broken wheel) raises :class:`RLLMImportError`
naming the cause: silently training against the twins would hide that rLLM never saw our classes.

Differences between the two rLLM versions that matter here:

* v0.2.1's ``Step`` is a dataclass with an ``info`` field; HEAD's is a pydantic model whose
  ``info`` is only a property over ``metadata`` (``Step(info=...)`` is silently dropped). Build
  steps without ``info=`` and write metadata through :func:`step_metadata`, which works on both.
"""

from __future__ import annotations

import importlib.util
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.errors import TerminalAgentError


class RLLMImportError(TerminalAgentError, ImportError):
    """rllm is installed but cannot be imported; the message names the failing import."""


def _rllm_installed() -> bool:
    try:
        return importlib.util.find_spec("rllm") is not None
    except (ImportError, ValueError):  # a broken parent package or a bogus __spec__: treat as installed-but-broken
        return True


RLLM_INSTALLED = _rllm_installed()
"""An ``rllm`` package is on the path (whether or not it imports)."""

if RLLM_INSTALLED:  # pragma: no cover - exercised in the rLLM conformance venvs
    try:
        # untyped and optional: rllm.* is ignore_missing_imports in [tool.mypy], so these names are Any here
        from rllm.agents.agent import Action, BaseAgent, Step, Trajectory
        from rllm.environments.base.base_env import BaseEnv
    except ImportError as exc:
        raise RLLMImportError(
            f"rllm is installed but its import failed ({type(exc).__name__}: {exc}); install what it names "
            "(see docs/training.md), or uninstall rllm to use terminal-agent's local base classes"
        ) from exc
    RLLM_AVAILABLE = True
else:
    RLLM_AVAILABLE = False

    @dataclass
    class Step:  # type: ignore[no-redef]  # the twin of the rLLM class when rllm is absent
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
        info: dict[str, Any] = field(default_factory=dict)
        reward: float = 0.0
        done: bool = False
        mc_return: float = 0.0
        advantage: Any = None

        def to_dict(self) -> dict[str, Any]:
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
    class Action:  # type: ignore[no-redef]  # the twin of the rLLM class when rllm is absent
        """What the agent hands to the environment (rLLM wraps the payload in ``.action``)."""

        action: Any = None

    @dataclass
    class Trajectory:  # type: ignore[no-redef]  # the twin of the rLLM class when rllm is absent
        """The steps of one episode and its reward."""

        uid: str = field(default_factory=lambda: str(uuid.uuid4()))
        name: str = "default_traj_name"
        task: Any = None
        steps: list[Step] = field(default_factory=list)
        reward: float | None = None
        info: dict[str, Any] = field(default_factory=dict)

        def to_dict(self) -> dict[str, Any]:
            return {
                "uid": self.uid,
                "name": self.name,
                "task": self.task,
                "steps": [step.to_dict() for step in self.steps],
                "reward": None if self.reward is None else float(self.reward),
                "info": self.info,
            }

    class BaseAgent(ABC):  # type: ignore[no-redef]  # the twin of the rLLM class when rllm is absent
        """Same surface as ``rllm.agents.agent.BaseAgent``."""

        @property
        def chat_completions(self) -> list[dict[str, str]]:
            return []

        @property
        def trajectory(self) -> Trajectory:
            return Trajectory()

        def update_from_env(
            self, observation: Any, reward: float, done: bool, info: dict[str, Any], **kwargs: Any
        ) -> None:
            raise NotImplementedError

        def update_from_model(self, response: str, **kwargs: Any) -> Action:
            raise NotImplementedError

        @abstractmethod
        def reset(self) -> None: ...

        def get_current_state(self) -> Step | None:
            steps = self.trajectory.steps
            return steps[-1] if steps else None

    class BaseEnv(ABC):  # type: ignore[no-redef]  # the twin of the rLLM class when rllm is absent
        """Same surface as ``rllm.environments.base.base_env.BaseEnv``."""

        @property
        def idx(self) -> Any:
            return getattr(self, "_idx", None)

        @idx.setter
        def idx(self, value: Any) -> None:
            self._idx = value

        @abstractmethod
        def reset(self) -> tuple[dict[str, Any], dict[str, Any]]: ...

        @abstractmethod
        def step(self, action: Any) -> tuple[Any, float, bool, dict[str, Any]]: ...

        def close(self) -> None:
            return None

        @staticmethod
        @abstractmethod
        def from_dict(info: dict[str, Any]) -> "BaseEnv": ...

        @staticmethod
        def is_multithread_safe() -> bool:
            return True


def step_metadata(step: Any) -> dict[str, Any]:
    """The mutable metadata dict of ``step`` on every rLLM version (v0.2.1 ``info``, HEAD ``metadata``)."""
    info = getattr(step, "info", None)
    if isinstance(info, dict):
        return info
    # HEAD's property auto-creates metadata; a twin or a foreign step without it gets a fresh dict
    step.info = {}
    metadata: dict[str, Any] = step.info  # step is any rLLM version's Step (untyped)
    return metadata


def rllm_version() -> str | None:
    """The installed rllm distribution's version, None without rllm."""
    if not RLLM_AVAILABLE:
        return None
    import importlib.metadata

    try:
        return importlib.metadata.version("rllm")
    except importlib.metadata.PackageNotFoundError:  # importable from a source tree without metadata
        return "unknown"


def action_payload(action: Any) -> Any:
    """The payload of an rLLM ``Action`` or the payload itself (engines pass either)."""
    return action.action if isinstance(action, Action) else action


__all__ = [
    "RLLM_AVAILABLE",
    "RLLM_INSTALLED",
    "Action",
    "BaseAgent",
    "BaseEnv",
    "RLLMImportError",
    "Step",
    "Trajectory",
    "action_payload",
    "rllm_version",
    "step_metadata",
]
