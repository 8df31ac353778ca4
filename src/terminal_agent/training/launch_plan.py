"""The launch plan: what a validated preset will hand to rLLM/verl or to the local trainer.

:func:`terminal_agent.training.launcher.plan_launch` builds it (the common checks, then the backend's hook
``plan`` fills the backend's part); the dry run shows it and ``launch`` runs it. Its own module, so that the
trainer backends' protocol can name it without importing the launcher.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from terminal_agent.training.preset_config import TrainingPreset

if TYPE_CHECKING:  # hydra/omegaconf and the local trainer's config are imported only by the backends that use them
    from omegaconf import DictConfig

    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.verl.overrides import HydraOverride
    from terminal_agent.training.verl.schema import Level2Result


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


@dataclass
class LaunchPlan:
    """A validated launch: what will be handed to rLLM/verl (or the local trainer)."""

    preset: TrainingPreset
    run_dir: Path
    train_files: str | None = None
    """Parquet the run trains on (written at launch when converted from ``data.tasks``)."""
    val_files: str | None = None
    hydra_overrides: list[HydraOverride] = field(default_factory=list)
    raw_overrides: list[RawOverride] = field(default_factory=list)
    """rLLM/verl hydra keys of the command line, composed after the preset's (verl backend)."""
    model_path: str | None = None
    """Where ``model.path`` resolved to (``embedded``: the converted directory; verl backend)."""
    trainer_config: DictConfig | None = None
    """The composed rLLM/verl DictConfig (verl backend)."""
    workflow_args: dict[str, Any] = field(default_factory=dict)
    level2: Level2Result | None = None
    """:class:`~terminal_agent.training.verl.schema.Level2Result` (verl backend)."""
    local_config: LocalTrainingConfig | None = None
    """The :class:`~terminal_agent.training.local.config.LocalTrainingConfig` the local trainer runs (backend local)."""
    notes: list[str] = field(default_factory=list)
    """Checks that could not run here, said plainly."""


__all__ = ["LaunchPlan", "RawOverride", "SandboxPlacement"]
