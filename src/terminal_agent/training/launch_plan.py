"""The launch plan: what a validated preset will hand to rLLM/verl or to the local trainer.

:func:`terminal_agent.training.launcher.plan_launch` builds it (the common checks, then the backend's hook
``plan`` fills the backend's part); the dry run shows it and ``launch`` runs it. Its own module, so that the
trainer backends' protocol can name it without importing the launcher.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terminal_agent.training.preset_config import TrainingPreset
from terminal_agent.training.verl.overrides import HydraOverride, RawOverride

if TYPE_CHECKING:  # hydra/omegaconf and the local trainer's config are imported only by the backends that use them
    from omegaconf import DictConfig

    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.verl.schema import Level2Result


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


__all__ = ["LaunchPlan"]
