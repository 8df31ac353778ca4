"""The ``verl`` trainer backend: rLLM + verl on GPUs (Ray workers, vLLM sampling), launched through rLLM's
``AgentTrainer`` with our Workflow (:mod:`terminal_agent.training.verl.launch` holds the steps it calls)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import ConfigError

from terminal_agent.training.verl import launch as verl_launch
from terminal_agent.training.verl import worker_environment
from terminal_agent.training.verl.geometry_checks import require_sound_geometry, verl_placement
from terminal_agent.training.verl.preset_sections import VerlPreset, verl_preset
from terminal_agent.training.verl.verl_plan import VerlPlan

if TYPE_CHECKING:
    from terminal_agent.training.launch_plan import LaunchPlan, RawOverride
    from terminal_agent.training.preset_config import TrainingPreset


class VerlBackend:
    """rLLM + verl: the hooks of :class:`~terminal_agent.training.trainer_backends.TrainerBackend`."""

    preset_type = VerlPreset
    trainer_path = verl_launch.WORKFLOW_CLASS_PATH
    gpu_geometry = True
    multicast_switches = worker_environment.NVLINK_MULTICAST_OFF
    in_process = False
    can_rehearse = True

    def check_launch(self, preset: "TrainingPreset", raw_overrides: Sequence["RawOverride"]) -> None:
        verl_launch.check_no_compaction(preset)

    def check_geometry(self, preset: "TrainingPreset") -> None:
        require_sound_geometry(verl_preset(preset))

    def placement(self, preset: "TrainingPreset") -> dict[str, Any]:
        return verl_placement(verl_preset(preset))

    def plan(self, plan: "LaunchPlan[VerlPlan]", *, level2: bool, verl_python: str | None) -> "LaunchPlan[VerlPlan]":
        return verl_launch.plan_verl(plan, level2=level2, verl_python=verl_python)

    def sandbox_where(self, backend: str) -> str:
        return (f"{backend} sandboxes on the driver's node: rLLM runs every env in the driver's thread pool, "
                "so all of them land on the head node (the ray backend spreads them over the nodes)")

    def dry_run_fields(self, plan: "LaunchPlan[VerlPlan]") -> dict[str, Any]:
        return verl_launch.verl_dry_run_fields(plan)

    def write_launch_files(self, plan: "LaunchPlan[VerlPlan]", launch_dir: Path) -> None:
        verl_launch.write_verl_launch_files(plan, launch_dir)

    def progress_totals(self, plan: "LaunchPlan[VerlPlan]") -> tuple[int, int]:
        raise ConfigError("backend verl runs in Ray workers, not in this process: it reports no progress here")

    def launch(self, plan: "LaunchPlan[VerlPlan]", *, progress: Any = None, rehearse: bool = False) -> Any:
        verl_launch.launch_verl(plan, rehearse=rehearse)
        return None


BACKEND = VerlBackend()

__all__ = ["BACKEND", "VerlBackend"]
