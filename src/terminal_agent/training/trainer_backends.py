"""What every trainer backend provides: a preset's ``backend`` -> the object that validates, plans, shows and
launches its run.

    get_trainer_backend(preset.backend).launch(plan, progress=None, rehearse=False)

The backends themselves are entries of :data:`~terminal_agent.training.trainer_registry.TRAINER_BACKENDS` (one
line per backend, each naming where its ``BACKEND`` lives: ``training/verl/backend.py``,
``training/local/backend.py``). The preset schema, the geometry rules, the launcher, the dry run and the
training scripts ask the backend (its hooks and flags) and never compare backend names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from terminal_agent.training.trainer_registry import TRAINER_BACKENDS

if TYPE_CHECKING:
    from terminal_agent.training.launch_plan import LaunchPlan, RawOverride
    from terminal_agent.training.preset_config import TrainingPreset


class TrainerBackend(Protocol):
    """One way of training: the flags and hooks every entry of ``TRAINER_BACKENDS`` has."""

    preset_type: type["TrainingPreset"]
    """The backend's preset: the common sections with the keys only this backend reads (declared in its package,
    ``training/<backend>/preset_sections.py``); a preset's ``backend`` picks it."""
    trainer_path: str
    """``module:attribute`` of what the launch runs (the dry run's ``workflow_class``)."""
    gpu_geometry: bool
    """Whether verl's GPU rules apply: GPU placement, batch arithmetic per rank, vLLM's LoRA ranks."""
    multicast_switches: Mapping[str, str]
    """Variables every process of the run gets last (verl: NVLink multicast off); empty: none."""
    in_process: bool
    """Whether the trainer runs in this process (it reports progress to the caller and returns a summary);
    the research drivers that call the local trainer directly need such a backend."""
    can_rehearse: bool
    """Whether ``launch(plan, rehearse=True)`` means something (a launch without GPUs up to the first GPU call)."""

    def check_launch(self, preset: "TrainingPreset", raw_overrides: Sequence["RawOverride"]) -> None:
        """What the launcher refuses before planning: keys this backend cannot honour (raises ``ConfigError``)."""
        ...

    def check_geometry(self, preset: "TrainingPreset") -> None:
        """The arithmetic the preset must satisfy on this backend's machines (raises ``ConfigError`` naming the key)."""
        ...

    def placement(self, preset: "TrainingPreset") -> dict[str, Any]:
        """The backend's keys of the dry run's ``placement`` (verl: ``gpus``, ``batch``); empty: none."""
        ...

    def plan(self, plan: "LaunchPlan[Any]", *, level2: bool, verl_python: str | None) -> "LaunchPlan[Any]":
        """Fill the backend's part of a validated plan (nothing is started)."""
        ...

    def sandbox_where(self, backend: str) -> str:
        """Where this trainer's sandboxes of the sandbox backend ``backend`` run, in words (not ``ray``)."""
        ...

    def dry_run_fields(self, plan: "LaunchPlan[Any]") -> dict[str, Any]:
        """The backend's own keys of the dry-run document (after the common ones)."""
        ...

    def write_launch_files(self, plan: "LaunchPlan[Any]", launch_dir: Path) -> None:
        """Files beside the dry run in ``launch_dir`` (verl: the composed ``trainer_config.yaml``); none: nothing."""
        ...

    def progress_totals(self, plan: "LaunchPlan[Any]") -> tuple[int, int]:
        """(steps, episodes per step) of an ``in_process`` trainer's progress view."""
        ...

    def launch(self, plan: "LaunchPlan[Any]", *, progress: Any = None, rehearse: bool = False) -> Any:
        """Run the plan (blocks until training ends); an in-process trainer returns its summary."""
        ...


def get_trainer_backend(name: str) -> TrainerBackend:
    """The backend registered as ``name``. Raises :class:`~terminal_agent.errors.ConfigError` listing the valid ones."""
    backend: TrainerBackend = TRAINER_BACKENDS.get(name)
    return backend


__all__ = ["TrainerBackend", "get_trainer_backend"]
