"""Trainer backends are a registry: a preset's ``backend`` picks the object that validates, plans, shows and
launches the run; a registered backend is reached by every step, an unknown one is refused with the list."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.training import launcher
from terminal_agent.training.local.backend import LocalBackend, LocalPlan
from terminal_agent.training.local.preset_sections import LocalPreset
from terminal_agent.training.preset_config import load_preset
from terminal_agent.training.trainer_backends import get_trainer_backend
from terminal_agent.training.trainer_registry import TRAINER_BACKENDS
from terminal_agent.training.verl import worker_environment

PLUGIN = "recording-local"


class RecordingPreset(LocalPreset):
    """The plugin's preset: the local trainer's sections under the plugin's name."""

    backend: Literal["recording-local"]  # type: ignore[assignment]


class RecordingBackend(LocalBackend):
    """A plugin backend: the local trainer's checks and plan, a launch that records the plan instead of training."""

    preset_type = RecordingPreset
    trainer_path = "tests.training.test_trainer_backends:RecordingBackend"

    def __init__(self) -> None:
        self.launched: list[Any] = []

    def sandbox_where(self, backend: str) -> str:
        return f"{backend} sandboxes wherever the recording backend says"

    def launch(self, plan: Any, *, progress: Any = None, rehearse: bool = False) -> Any:
        self.launched.append(plan)
        return "recorded"


@pytest.fixture
def plugin_backend() -> Iterator[RecordingBackend]:
    backend = RecordingBackend()
    TRAINER_BACKENDS.register(PLUGIN)(backend)
    yield backend
    TRAINER_BACKENDS.unregister(PLUGIN)


def test_the_built_in_backends_are_registered_with_their_flags():
    assert {"local", "verl"} <= set(TRAINER_BACKENDS.names())
    verl, local = get_trainer_backend("verl"), get_trainer_backend("local")
    assert verl.gpu_geometry and verl.can_rehearse and not verl.in_process
    assert dict(verl.multicast_switches) == worker_environment.NVLINK_MULTICAST_OFF
    assert local.in_process and not (local.gpu_geometry or local.can_rehearse)
    assert dict(local.multicast_switches) == {}


def test_an_unknown_backend_is_refused_naming_the_registered_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"backend: unknown trainer backend 'jax'; valid: local, verl"):
        load_preset("local_cpu_smoke", ["backend=jax", f"trainer.output_dir={tmp_path}"])
    with pytest.raises(ConfigError, match=r"unknown trainer backend 'jax'; valid: local, verl"):
        get_trainer_backend("jax")


def test_a_registered_backend_is_reached_by_validation_plan_dry_run_and_launch(tmp_path, plugin_backend):
    preset = load_preset("local_cpu_smoke", [f"backend={PLUGIN}", f"trainer.output_dir={tmp_path}"])
    assert preset.backend == PLUGIN
    plan = launcher.plan_launch(preset)
    assert isinstance(plan.backend_part(), LocalPlan)
    document = launcher.dry_run_document(plan)
    assert document["workflow_class"] == RecordingBackend.trainer_path
    assert document["placement"]["sandboxes"]["where"].endswith("wherever the recording backend says")
    assert document["nvlink_multicast_off"] is None and document["ray_runtime_env"] is None
    assert launcher.launch(plan) == "recorded"
    assert plugin_backend.launched == [plan]
    assert (plan.run_dir / "launch" / "dry_run.yaml").is_file()  # the launch kept its dry run, as every launch does


def test_a_backend_s_own_preset_type_validates(tmp_path, plugin_backend):
    preset = load_preset("local_cpu_smoke", [f"backend={PLUGIN}"])
    assert type(preset) is RecordingPreset
    with pytest.raises(ConfigError, match=rf"^preset verl_1gpu: model\.lora_rank: unknown key of a backend {PLUGIN} "):
        load_preset("verl_1gpu", [f"backend={PLUGIN}"])
