"""The ``local`` trainer backend: the project's single-machine GRPO trainer, run in this process
(:func:`terminal_agent.training.local.trainer.run_local_training` with the preset's ``local`` section)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import ConfigError
from terminal_agent.training.local.preset_sections import LocalPreset, local_preset

if TYPE_CHECKING:
    from terminal_agent.training.launch_plan import LaunchPlan, RawOverride
    from terminal_agent.training.preset_config import TrainingPreset

#: What a local launch runs (the dry run's ``workflow_class``).
LOCAL_TRAINER_PATH = "terminal_agent.training.local.trainer:run_local_training"


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

    def plan(self, plan: "LaunchPlan", *, level2: bool, verl_python: str | None) -> "LaunchPlan":
        from terminal_agent.training.local.config import LocalTrainingConfig

        plan.local_config = LocalTrainingConfig.from_preset(local_preset(plan.preset))  # the config the launch runs
        return plan

    def sandbox_where(self, backend: str) -> str:
        return f"{backend} sandboxes on this machine, started by the local trainer's process"

    def dry_run_fields(self, plan: "LaunchPlan") -> dict[str, Any]:
        return {"local_config": plan.local_config.model_dump(mode="json")} if plan.local_config is not None else {}

    def launch(self, plan: "LaunchPlan", *, progress: Any = None, rehearse: bool = False) -> Any:
        from terminal_agent.training.launch_environment import load_object

        run_local_training = load_object(self.trainer_path, "the local trainer")
        return run_local_training(plan.preset, plan.run_dir, config=plan.local_config, progress=progress)


BACKEND = LocalBackend()

__all__ = ["BACKEND", "LOCAL_TRAINER_PATH", "LocalBackend"]
