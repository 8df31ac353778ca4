"""The launch plan: what a validated preset will hand to its trainer backend.

:func:`terminal_agent.training.launcher.plan_launch` builds it (the common checks and the common part, then the
backend's hook ``plan`` fills the backend's own part, ``backend_plan``: verl's ``VerlPlan`` in
``training/verl/launch.py``, the local trainer's ``LocalPlan`` in ``training/local/backend.py``); the dry run
shows it and ``launch`` runs it. Its own module, so that the trainer backends' protocol can name it without
importing the launcher.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from terminal_agent.errors import ConfigError
from terminal_agent.training.preset_config import TrainingPreset


@dataclass(frozen=True)
class RawOverride:
    """A ``key=value`` of the command line that is no preset key, handed to the backend (verl: a raw rLLM/verl
    hydra key; the local backend refuses every one)."""

    text: str
    """As typed (``+actor_rollout_ref.model.override_config.attn_implementation=sdpa``)."""
    key: str
    """The dotted hydra key, without the ``+``."""
    prefix: Literal["", "+", "++"]
    """Hydra's ``+`` (add a key the schema does not have) or ``++`` (add or override)."""
    value: str
    """The value as typed, in Hydra's grammar (``[console,file]``, ``true``, ``1e-6``)."""

    def to_hydra(self) -> str:
        return f"{self.prefix}{self.key}={self.value}"


class SandboxPlacement(BaseModel):
    """Where the episodes' sandboxes run (the dry run's ``placement.sandboxes``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str
    """``sandbox.backend`` as resolved."""
    where: str
    """In words: which process or node starts them, and beside what."""
    parallel_episodes: int
    """``agent.parallel_episodes``: sandboxes alive at once (each episode holds one)."""
    planned_slots: int | None = None
    """Slots the backend plans for (ray: cluster.nodes x ``sandbox.ray.max_sandboxes_per_node``); None: bounded by
    the one node alone. The launch checks the live cluster's slots after ``ray.init``."""


BackendPlan = TypeVar("BackendPlan")
"""A trainer backend's own part of a launch plan (verl: ``VerlPlan``; local: ``LocalPlan``)."""


@dataclass
class LaunchPlan(Generic[BackendPlan]):
    """A validated launch: the common part every backend's launch reads, and the backend's own part."""

    preset: TrainingPreset
    run_dir: Path
    raw_overrides: list[RawOverride] = field(default_factory=list)
    """``key=value`` words of the command line that are no preset key (verl: raw rLLM/verl hydra keys)."""
    workflow_args: dict[str, Any] = field(default_factory=dict)
    """The env, agent and episode arguments of the preset (:mod:`terminal_agent.training.episode_args`)."""
    notes: list[str] = field(default_factory=list)
    """Checks that could not run here, said plainly."""
    backend_plan: BackendPlan | None = None
    """The backend's own part, filled by its hook ``plan``; None until then."""

    def backend_part(self) -> BackendPlan:
        """The backend's own part of a planned launch (its hook ``plan`` has run)."""
        if self.backend_plan is None:
            raise ConfigError(f"the launch plan of preset {self.preset.name!r} has no {self.preset.backend} part "
                              "(plan_launch fills it)")
        return self.backend_plan


__all__ = ["BackendPlan", "LaunchPlan", "RawOverride", "SandboxPlacement"]
