"""The verl backend's part of a launch plan: what ``plan_verl`` works out for rLLM/verl (data files, model path,
hydra keys, the composed config, level 2), carried as ``LaunchPlan.backend_plan``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # hydra/omegaconf and the schema checks are imported where a verl plan is made
    from omegaconf import DictConfig

    from terminal_agent.training.verl.overrides import HydraOverride
    from terminal_agent.training.verl.schema import Level2Result


@dataclass
class VerlPlan:
    """The verl backend's part of a launch plan (``LaunchPlan.backend_plan``)."""

    train_files: str
    """Parquet the run trains on (written at launch when converted from ``data.tasks``)."""
    val_files: str | None
    """Parquet the run validates on (None: verl validates on the train file)."""
    model_path: str
    """Where ``model.path`` resolved to (``embedded``: the converted directory)."""
    hydra_overrides: list[HydraOverride]
    """Every rLLM/verl key the preset sets, each with its preset key."""
    trainer_config: DictConfig
    """The composed rLLM/verl DictConfig (the preset's keys, then the command line's raw hydra keys)."""
    level2: Level2Result | None = None
    """verl's own ``validate_config`` (None: not asked for)."""


__all__ = ["VerlPlan"]
