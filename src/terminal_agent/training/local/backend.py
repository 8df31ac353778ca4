"""The ``local`` trainer backend: the project's single-machine GRPO trainer, run in this process
(:func:`terminal_agent.training.local.trainer.run_local_training` with the preset's ``local`` section)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import ConfigError
from terminal_agent.training import launch_environment, launcher

if TYPE_CHECKING:
    from terminal_agent.training.launch_plan import LaunchPlan
    from terminal_agent.training.preset_config import TrainingPreset
    from terminal_agent.training.verl.overrides import RawOverride


class LocalBackend:
    """The local trainer: the hooks of :class:`~terminal_agent.training.trainer_backends.TrainerBackend`."""

    trainer_path = launcher.LOCAL_TRAINER_PATH
    gpu_geometry = False
    multicast_switches: dict[str, str] = {}
    in_process = True
    can_rehearse = False

    def check_preset(self, preset: "TrainingPreset") -> None:
        if preset.local is None:
            raise ValueError("backend local needs a 'local' section")

    def check_launch(self, preset: "TrainingPreset", raw_overrides: Sequence["RawOverride"]) -> None:
        if raw_overrides:
            first = raw_overrides[0]
            raise ConfigError(f"{first.key}: not a key of the preset, and rLLM/verl hydra keys are for backend verl "
                              f"(preset {preset.name!r} is backend {preset.backend})")
        launcher.check_no_verl_path_keys(preset)

    def plan(self, plan: "LaunchPlan", *, level2: bool, verl_python: str | None) -> "LaunchPlan":
        from terminal_agent.training.local.config import LocalTrainingConfig

        plan.local_config = LocalTrainingConfig.from_preset(plan.preset)  # what run_local_training builds
        return plan

    def sandbox_where(self, backend: str) -> str:
        return f"{backend} sandboxes on this machine, started by the local trainer's process"

    def dry_run_fields(self, plan: "LaunchPlan") -> dict[str, Any]:
        return {"local_config": plan.local_config.model_dump(mode="json")} if plan.local_config is not None else {}

    def launch(self, plan: "LaunchPlan", *, progress: Any = None, rehearse: bool = False) -> Any:
        run_local_training = launch_environment.load_object(self.trainer_path, "the local trainer")
        return run_local_training(plan.preset, plan.run_dir, progress=progress)


BACKEND = LocalBackend()

__all__ = ["BACKEND", "LocalBackend"]
