"""One validation path for local presets: the dry run builds the local trainer's own config (as the
launch does) and refuses what the trainer cannot run or would ignore, naming the preset key; and
validation on held-out tasks during training (trainer.test_freq, val_before_train; the run that writes
val/ metrics is in test_local_training_step.py, shared with the training step's own checks)."""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from terminal_agent.errors import ConfigError
from terminal_agent.training import launcher
from terminal_agent.training.local.config import LocalTrainingConfig, local_preset_problems
from terminal_agent.training.local.preset_sections import LocalPreset
from terminal_agent.training.preset_config import load_preset, preset_from_mapping, preset_names

REPO = Path(__file__).resolve().parents[2]
LOCAL_PRESETS = [name for name in preset_names() if load_preset(name).backend == "local"]
#: Preset keys a local run reads outside LocalTrainingConfig, or checks instead of reading.
READ_ELSEWHERE = {
    "name", "description", "backend",
    "data.tasks", "data.val_fraction", "data.split_seed", "data.splits",  # the task split (local_task_split)
    "trainer.output_dir",  # the run directory
    "cluster.nodes", "cluster.gpus_per_node", "batch.ppo_mini_batch_size", "agent.compaction",  # checked values
    "sandbox.env",  # a free mapping: the episode spec reads it whole (tests/training/test_episode_spec.py)
    "lengths.max_prompt_length",  # checked against the context (the lengths section's validator)
}
#: Sections handed to the local config whole (a change of one of their keys is a change of the section).
WHOLE_SECTIONS = {"reward", "trainer.harbor_rollouts"}
#: Values to change a key to where the next value of its type would be refused.
OTHER_VALUE = {"algorithm.adv_estimator": "grpo_sample_std", "algorithm.kl_loss_type": "k3",
               "sandbox.backend": "bwrap", "local.lora.target_modules": ["q_proj"]}


def _leaf_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        candidates = [field.annotation, *typing.get_args(field.annotation)]
        section = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        dotted = f"{prefix}{name}"
        if section is None or dotted in WHOLE_SECTIONS:
            keys.add(dotted)
        else:
            keys |= _leaf_keys(section, f"{dotted}.")
    return keys


def _other(key: str, value: object, annotation: object) -> object:
    """A valid value of ``key`` other than ``value``."""
    if key in OTHER_VALUE:
        return OTHER_VALUE[key]
    if isinstance(value, BaseModel):  # a whole section: its first field changed
        name = next(iter(type(value).model_fields))
        return {**value.model_dump(), name: _other("", getattr(value, name), type(value).model_fields[name].annotation)}
    if isinstance(value, list):
        return value[:1] if len(value) > 1 else ["x"]
    choices = [c for arg in [annotation, *typing.get_args(annotation)] for c in typing.get_args(arg)
               if isinstance(c, str)] if typing.get_origin(annotation) is typing.Literal or any(
        typing.get_origin(arg) is typing.Literal for arg in typing.get_args(annotation)) else []
    if choices:
        return next(c for c in choices if c != value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2 if value else 0.5
    if isinstance(value, str):
        return value + "-x"
    return "x" if str in typing.get_args(annotation) else 2  # None of an optional str or int


def test_every_key_of_a_local_preset_reaches_the_local_trainer():
    """Changing any key of a local preset (but the few read or checked elsewhere) changes the local trainer's
    config: a local preset has no key the local trainer ignores."""
    base = load_preset("local_1gpu")
    built = LocalTrainingConfig.from_preset(base)
    keys = _leaf_keys(LocalPreset) - READ_ELSEWHERE
    assert len(keys) > 40
    for key in sorted(keys):
        data = base.model_dump()
        *sections, name = key.split(".")
        owner, model = data, LocalPreset
        for part in sections:
            owner = owner[part]
            model = next(c for c in [model.model_fields[part].annotation,
                                     *typing.get_args(model.model_fields[part].annotation)]
                         if isinstance(c, type) and issubclass(c, BaseModel))
        value = owner[name]
        annotation = model.model_fields[name].annotation
        current = annotation.model_validate(value) if isinstance(value, dict) else value
        owner[name] = _other(key, current, annotation)
        if key == "batch.train_batch_size":  # one optimizer step per local step: the mini batch follows
            owner["ppo_mini_batch_size"] = owner[name]
        changed = LocalTrainingConfig.from_preset(preset_from_mapping(data, "mutated"))
        assert changed != built, f"{key} (set to {owner[name]!r}, was {value!r}) does not reach the local config"


def test_dry_run_of_a_value_the_local_trainer_cannot_run_exits_2_naming_the_key(tmp_path):
    """kl is a valid verl KL estimator but not one the local loss implements."""
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, str(REPO / "training_scripts" / "launch_training.py"), "local_cpu_smoke",
         "algorithm.kl_loss_type=kl", f"trainer.output_dir={tmp_path}", "--dry-run"],
        capture_output=True, text=True, env=environment, timeout=300, cwd=REPO,
    )
    assert done.returncode == 2, done.stderr
    assert "algorithm.kl_loss_type" in done.stderr and "'kl'" in done.stderr and "low_var_kl" in done.stderr
    assert "Traceback" not in done.stderr and "kl_loss_type\n" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing saved, nothing started


@pytest.mark.parametrize("override, message", [
    ("trainer.total_training_steps=5", "unknown key 'trainer.total_training_steps': section 'trainer' has"),
    ("offload.param=true", "unknown key 'offload.param': a preset has"),
    ("model.lora_rank=16", "unknown key 'model.lora_rank': section 'model' has path"),
    ("batch.micro_batch_size_per_gpu=4", "unknown key 'batch.micro_batch_size_per_gpu': section 'batch' has"),
])
def test_a_key_of_the_verl_backend_is_no_key_of_a_local_preset(override, message):
    with pytest.raises(ConfigError) as raised:
        load_preset("local_cpu_smoke", [override])
    assert str(raised.value).startswith(message)
    assert len(str(raised.value).splitlines()) == 1


def test_a_verl_key_written_in_a_local_preset_file_is_named(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: local_cpu_smoke\nmodel:\n  path: embedded\n  lora_rank: 8\n")
    with pytest.raises(ConfigError, match=r"model\.lora_rank: unknown key of a backend local preset"):
        load_preset(str(path))


@pytest.mark.parametrize("overrides, keys", [
    # one optimizer step per local step: the mini batch is the whole batch
    (["batch.train_batch_size=4", "batch.ppo_mini_batch_size=2"], ["batch.ppo_mini_batch_size"]),
    # the local trainer labels its sandboxes with its own run id (the rest of sandbox.env is honoured)
    (["sandbox.env.run_id=mine"], ["sandbox.env.run_id"]),
    # val_fraction 0 and no data.splits: validation would have no task
    (["trainer.test_freq=1"], ["trainer.test_freq"]),
])
def test_values_the_local_trainer_would_not_honour_are_refused(overrides, keys):
    """(verl's ``trainer.resume=resume_path`` is no value of a local preset's ``trainer.resume`` at all.)"""
    problems = local_preset_problems(load_preset("local_cpu_smoke", overrides))
    assert [problem.split(":")[0] for problem in problems] == keys


def test_local_seed_reaches_the_trainers_config(tmp_path):
    plan = launcher.plan_launch(load_preset("local_cpu_smoke", ["local.seed=3", f"trainer.output_dir={tmp_path}"]))
    assert plan.backend_part().config.seed == 3
    assert launcher.dry_run_document(plan)["local_config"]["seed"] == 3
    assert LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke")).seed == 0


@pytest.mark.parametrize("name", LOCAL_PRESETS)
def test_every_shipped_local_preset_dry_runs_valid(name, tmp_path):
    plan = launcher.plan_launch(load_preset(name, [f"trainer.output_dir={tmp_path}"]))
    text, path = launcher.write_dry_run(plan)
    assert path.is_file() and "local_config:" in text
    assert plan.backend_part().config == LocalTrainingConfig.from_preset(plan.preset)  # what the launch builds
    assert plan.backend_part().config.steps == plan.preset.local.steps


def test_local_1gpu_validates_on_the_frozen_held_out_split():
    preset = load_preset("local_1gpu")
    config = LocalTrainingConfig.from_preset(preset)
    assert (config.test_freq, config.val_before_train, config.val_max_tasks) == (5, True, 32)
    assert preset.data.splits == "dataset/splits/splits.json"


# A run with test_freq=1 and val_before_train writing val/ metrics on the real env and grader is checked in
# tests/training/test_local_training_step.py, on the same run as the training step (one CPU run of the model for both).
