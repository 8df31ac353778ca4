"""The ``local`` trainer backend: the project's single-machine GRPO trainer, run in this process
(:func:`terminal_agent.training.local.trainer.run_local_training` with the preset's ``local`` section)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import ConfigError
from terminal_agent.training.local.preset_sections import LocalPreset, local_preset

if TYPE_CHECKING:  # the local trainer's config imports torch: only a plan needs it
    from terminal_agent.training.launch_plan import LaunchPlan, RawOverride
    from terminal_agent.training.local.config import LocalTrainingConfig
    from terminal_agent.training.preset_config import TrainingPreset

#: What a local launch runs (the dry run's ``workflow_class``).
LOCAL_TRAINER_PATH = "terminal_agent.training.local.trainer:run_local_training"


@dataclass(frozen=True)
class LocalPlan:
    """The local backend's part of a launch plan (``LaunchPlan.backend_plan``)."""

    config: LocalTrainingConfig
    """The config the local trainer runs, built once from the preset (:meth:`LocalTrainingConfig.from_preset`)."""


class LocalBackend:
    """The local trainer: the hooks of :class:`~terminal_agent.training.trainer_backends.TrainerBackend`."""

    preset_type = LocalPreset
    trainer_path = LOCAL_TRAINER_PATH
    gpu_geometry = False
    multicast_switches: dict[str, str] = {}
    in_process = True
    can_rehearse = False

    def check_launch(self, preset: "TrainingPreset", raw_overrides: Sequence["RawOverride"]) -> None:
        if raw_overrides:
            first = raw_overrides[0]
            raise ConfigError(f"{first.key}: not a key of the preset, and rLLM/verl hydra keys are for backend verl "
                              f"(preset {preset.name!r} is backend {preset.backend})")

    def check_geometry(self, preset: "TrainingPreset") -> None:
        return None  # one process on one device: no GPU arithmetic (its limits are local_preset_problems')

    def placement(self, preset: "TrainingPreset") -> dict[str, Any]:
        return {}

    def plan(self, plan: "LaunchPlan[LocalPlan]", *, level2: bool, verl_python: str | None) -> "LaunchPlan[LocalPlan]":
        from terminal_agent.training.local.config import LocalTrainingConfig

        plan.backend_plan = LocalPlan(LocalTrainingConfig.from_preset(local_preset(plan.preset)))
        return plan

    def sandbox_where(self, backend: str) -> str:
        return f"{backend} sandboxes on this machine, started by the local trainer's process"

    def dry_run_fields(self, plan: "LaunchPlan[LocalPlan]") -> dict[str, Any]:
        return {"local_config": plan.backend_part().config.model_dump(mode="json")}

    def write_launch_files(self, plan: "LaunchPlan[LocalPlan]", launch_dir: Path) -> None:
        return None  # the dry run holds the whole local config

    def progress_totals(self, plan: "LaunchPlan[LocalPlan]") -> tuple[int, int]:
        config = plan.backend_part().config
        return config.steps, config.tasks_per_step * config.group_size

    def launch(self, plan: "LaunchPlan[LocalPlan]", *, progress: Any = None, rehearse: bool = False) -> Any:
        from terminal_agent.training.launch_environment import load_object

        run_local_training = load_object(self.trainer_path, "the local trainer")
        return run_local_training(plan.preset, plan.run_dir, config=plan.backend_part().config, progress=progress)


BACKEND = LocalBackend()

__all__ = ["BACKEND", "LOCAL_TRAINER_PATH", "LocalBackend", "LocalPlan"]
