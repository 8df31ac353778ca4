"""Raw rLLM/verl hydra keys through the launcher, and what the verl_1gpu preset resolves at plan time.

The rule that tells a preset key from a raw key, the level-1 checks of raw keys against the real
composed schema (unknown keys, ``+`` additions, conflicts with what the preset maps), where the
dry run says each hydra key's value comes from, and the plan-time resolutions of ``verl_1gpu``:
``sandbox.backend: auto``, ``model.path: embedded``, its runtime env, its task selection.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from terminal_agent.errors import ConfigError
from terminal_agent.training import launcher
from terminal_agent.training.preset_config import is_preset_key, load_preset
from terminal_agent.training.verl import data_files
from terminal_agent.training.verl import launch as verl_launch
from terminal_agent.training.verl import worker_environment
from terminal_agent.training.verl.overrides import SHARED_SECTIONS, split_overrides, verl_overrides
from terminal_agent.training.verl.preset_sections import VerlPreset

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training_scripts" / "launch_training.py"


def plan(tmp_path, *words, level2=False):
    preset_keys, raw = split_overrides([f"trainer.output_dir={tmp_path}", *words])
    return launcher.plan_launch(load_preset("verl_1gpu", preset_keys), raw_overrides=raw, level2=level2)


# --- the rule ------------------------------------------------------------------------------------
@pytest.mark.parametrize("word, kind", [
    ("rollout.n=16", "preset"),
    ("trainer.save_freq=5", "preset"),                          # verl has the same path: the preset key
    ("trainer.total_training_steps=21", "preset"),
    ("sandbox.env.sandbox.bwrap.images_dir=/x", "preset"),      # inside a free mapping of the preset
    ("runtime_env.env_vars.FOO=1", "preset"),
    ("rollout.bogus=1", "preset"),                              # a preset-only section: refused by the preset
    ("model.override_config.attn_implementation=sdpa", "preset"),
    ("trainer.logger=[console]", "raw"),                        # a shared section, not a preset key
    ("algorithm.use_kl_in_reward=true", "raw"),
    ("data.dataloader_num_workers=2", "raw"),
    ("actor_rollout_ref.rollout.enforce_eager=true", "raw"),
    ("ray_kwargs.ray_init.num_cpus=4", "raw"),
    ("+actor_rollout_ref.model.override_config.attn_implementation=sdpa", "raw"),
    ("++trainer.save_freq=5", "raw"),
])
def test_split_tells_preset_keys_from_raw_keys(word, kind):
    preset_keys, raw = split_overrides([word])
    assert (preset_keys, [r.text for r in raw]) == (([word], []) if kind == "preset" else ([], [word]))


def test_split_refuses_what_is_no_override():
    for word in ("~trainer.logger", "novalue", "+=1", "a..b=1"):
        with pytest.raises(ConfigError, match="override"):
            split_overrides([word])


def test_shared_sections_are_the_sections_both_configs_have(verl_schema_sources):
    from terminal_agent.training.verl.schema import base_trainer_schema

    assert set(SHARED_SECTIONS) == set(VerlPreset.model_fields) & set(base_trainer_schema())


def _leaf_keys(model, prefix=""):
    from pydantic import BaseModel

    for name, field in model.model_fields.items():
        candidates = [field.annotation, *getattr(field.annotation, "__args__", ())]
        sub = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        yield from (_leaf_keys(sub, f"{prefix}{name}.") if sub is not None else [f"{prefix}{name}"])


@pytest.mark.parametrize("name", ["verl_1gpu", "prod_32b_8_gpus"])
def test_no_preset_key_is_ambiguous_with_a_verl_key(name, verl_schema_sources):
    """Every path that is a preset key and a verl key too maps onto that very verl key with its own value."""
    from terminal_agent.training.verl.schema import base_trainer_schema, schema_has_key

    schema = base_trainer_schema()
    preset = load_preset(name)
    overrides = verl_overrides(preset, train_files="t.parquet", val_files="v.parquet")
    shared = [key for key in _leaf_keys(VerlPreset) if schema_has_key(schema, key)]
    assert "trainer.total_training_steps" in shared and "trainer.logger" not in shared
    for key in shared:
        if key in ("data.train_files", "data.val_files"):
            continue  # the launcher's parquet paths
        value = preset
        for part in key.split("."):
            value = getattr(value, part)
        assert any(o.key == key and o.value == value for o in overrides), key
    assert all(is_preset_key(key.split("."), VerlPreset) for key in shared)


def test_an_ambiguous_command_line_key_is_refused_by_name(verl_schema_sources):
    preset = load_preset("verl_1gpu", ["trainer.save_freq=3"])
    overrides = [o for o in verl_overrides(preset, train_files="t", val_files=None) if o.key != "trainer.save_freq"]
    with pytest.raises(ConfigError, match=r"trainer\.save_freq: ambiguous"):
        verl_launch._check_ambiguous_keys(preset, overrides)


# --- level 1 of raw keys --------------------------------------------------------------------------
def test_raw_keys_reach_the_composed_config_and_the_dry_run_names_every_source(tmp_path, verl_schema_sources):
    done = plan(tmp_path, "rollout.n=4", "actor_rollout_ref.actor.ppo_epochs=2", "+ray_kwargs.ray_init.num_gpus=1",
                "actor_rollout_ref.rollout.max_model_len=4096")
    config = done.backend_part().trainer_config
    assert config.actor_rollout_ref.actor.ppo_epochs == 2
    assert config.ray_kwargs.ray_init.num_gpus == 1
    assert config.actor_rollout_ref.rollout.n == 4
    sources = verl_launch.hydra_key_sources(done)
    assert sources["actor_rollout_ref.actor.ppo_epochs"] == "command line"
    assert sources["ray_kwargs.ray_init.num_gpus"] == "command line"
    assert sources["actor_rollout_ref.rollout.n"] == "command line rollout.n"
    assert sources["actor_rollout_ref.rollout.temperature"] == "preset rollout.temperature"
    assert sources["actor_rollout_ref.rollout.mode"] == "mapping (backend)"
    assert sources["actor_rollout_ref.rollout.max_model_len"] == \
        "command line (agrees with preset lengths.max_model_len)"
    document = launcher.dry_run_document(done)
    assert "+ray_kwargs.ray_init.num_gpus=1" in document["raw_overrides"]
    assert document["hydra_key_sources"] == sources


@pytest.mark.parametrize("word, message", [
    ("actor_rollout_ref.rollout.enforce_eager=true",
     r"actor_rollout_ref\.rollout\.enforce_eager=true \(command line\) conflicts with the preset key "
     r"rollout\.enforce_eager"),
    ("trainer.logger=[console]", r"conflicts with the preset key trainer\.loggers"),
    ("actor_rollout_ref.rollout=null", r"actor_rollout_ref\.rollout=null \(command line\) conflicts"),
    ("actor_rollout_ref.rollout.mode=sync", r"conflicts with the project's mapping \(governed by backend\)"),
    ("+actor_rollout_ref.model.override_config.attn_implementation=eager",
     r"conflicts with the preset key model\.attn_implementation"),
    ("actor_rollout_ref.actor.optim.lr_typo=1", r"actor_rollout_ref\.actor\.optim\.lr_typo \(command line\): neither"),
    ("trainer.total_training_step=3", r"trainer\.total_training_step .*section 'trainer' has: .*total_training_steps"),
    ("+actor_rollout_ref.rollout.n=3", r"\+actor_rollout_ref\.rollout\.n \(command line\): .* already has"),
    ("actor_rollout_ref.actor.ppo_epochs=[1", r"ppo_epochs=\[1 \(command line\): hydra rejects it"),
])
def test_bad_raw_keys_are_refused_by_name(tmp_path, word, message, verl_schema_sources):
    with pytest.raises(ConfigError, match=message):
        plan(tmp_path, word)


@pytest.mark.slow
def test_level2_judges_raw_keys_too(tmp_path, verl_python):
    """verl's own validate_config sees the raw keys: here both micro-batch forms at once, which it refuses."""
    from terminal_agent.training.verl.schema import validate_with_verl

    # fixed micro batches of sequences (verl checks the two forms only then; verl_1gpu cuts them by tokens)
    config = plan(tmp_path, "batch.max_tokens_per_gpu=null", "actor_rollout_ref.actor.ppo_micro_batch_size=8").backend_part().trainer_config
    with pytest.raises(ConfigError, match=r"(?s)verl 0\.9\.1 validate_config refuses .*both .actor\.ppo_micro_batch_size"):
        validate_with_verl(config, python=verl_python)


def test_a_raw_addition_the_mapping_adds_too_may_agree(tmp_path, verl_schema_sources):
    done = plan(tmp_path, "+actor_rollout_ref.model.override_config.attn_implementation=terminal_agent_varlen")
    model = done.backend_part().trainer_config.actor_rollout_ref.model
    assert model.override_config.attn_implementation == "terminal_agent_varlen"


def test_raw_keys_need_a_verl_preset(tmp_path):
    preset_keys, raw = split_overrides(["actor_rollout_ref.rollout.n=4"])
    with pytest.raises(ConfigError, match=r"actor_rollout_ref\.rollout\.n: .*backend verl"):
        launcher.plan_launch(load_preset("local_cpu_smoke", [f"trainer.output_dir={tmp_path}"]), raw_overrides=raw)


# --- verl_1gpu at plan time -------------------------------------------------------------------------
def test_verl_1gpu_carries_the_settings_the_node_needs(tmp_path, verl_schema_sources, monkeypatch):
    from terminal_agent.models.embedded import cached_model_dir

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # the preset's value wins over a forwarded one
    done = plan(tmp_path)
    model = done.backend_part().trainer_config.actor_rollout_ref.model
    assert done.backend_part().model_path == str(cached_model_dir()) == model.path
    # padding-free rows through the project's attention, which every verl worker imports before loading the model
    assert model.override_config.attn_implementation == "terminal_agent_varlen" and model.use_remove_padding is True
    assert model.external_lib == "terminal_agent.training.verl.packed_attention"
    assert done.backend_part().trainer_config.actor_rollout_ref.actor.ulysses_sequence_parallel_size == 1
    assert model.lora_rank == 0 and done.backend_part().trainer_config.actor_rollout_ref.rollout.enforce_eager is False
    assert list(done.backend_part().trainer_config.trainer.logger) == ["console", "file"]
    env_vars = worker_environment.ray_runtime_env(done.preset)["env_vars"]
    assert {name: env_vars[name] for name in done.preset.runtime_env.env_vars} == {
        "VLLM_USE_FLASHINFER_SAMPLER": "0", "VLLM_HOST_IP": "127.0.0.1", "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "RAY_memory_monitor_refresh_ms": "0"}
    assert env_vars["VERL_FILE_LOGGER_PATH"] == str((tmp_path / "verl_1gpu" / "verl_metrics.jsonl").resolve())
    assert env_vars["VERL_USE_EXTERNAL_MODULES"] == "terminal_agent.training.verl.packed_attention"
    assert done.preset.sandbox.backend in {"docker", "bwrap"}
    assert done.workflow_args["env_args"]["sandbox"]["backend"] == done.preset.sandbox.backend
    assert any(note.startswith("sandbox.backend auto -> ") for note in done.notes)


def test_lora_is_one_key_away(tmp_path, verl_schema_sources):
    model = plan(tmp_path, "model.lora_rank=8").backend_part().trainer_config.actor_rollout_ref.model
    assert (model.lora_rank, model.lora_alpha, model.target_modules) == (8, 16, "all-linear")


def test_sandbox_auto_is_bwrap_where_no_docker_daemon_answers(tmp_path, verl_schema_sources):
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), "DOCKER_HOST": f"unix://{tmp_path}/no.sock"}
    done = subprocess.run([sys.executable, str(SCRIPT), "verl_1gpu", f"trainer.output_dir={tmp_path}", "--dry-run",
                           "--skip-level2"], capture_output=True, text=True, env=environment, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    document = yaml.safe_load(done.stdout)
    assert document["preset"]["sandbox"]["backend"] == "bwrap"
    assert document["workflow_args"]["env_args"]["sandbox"]["backend"] == "bwrap"
    assert "sandbox.backend auto -> bwrap (no Docker daemon answers here)" in document["notes"]


def test_tasks_narrow_to_ids_and_to_the_export(tmp_path, verl_schema_sources):
    export = tmp_path / "export"
    export.mkdir()
    (export / "manifest.json").write_text(json.dumps({"tasks": ["count-log-levels", "fix-stats-script",
                                                                 "make-project-tree", "not-a-task"]}))
    done = plan(tmp_path, "data.only_exported=true", f"sandbox.env.sandbox.bwrap.images_dir={export}",
                "data.task_ids=[count-log-levels,make-project-tree,csv-to-json-summary]",
                "batch.train_batch_size=1", "batch.ppo_mini_batch_size=1")
    data_files.write_parquet_files(done)
    import pandas

    train = pandas.read_parquet(done.backend_part().train_files)
    val = pandas.read_parquet(done.backend_part().val_files)
    assert len(train) == 1 and len(val) == 1  # count-log-levels trains, make-project-tree validates
    assert done.backend_part().trainer_config.data.train_files == done.backend_part().train_files


@pytest.mark.parametrize("words, message", [
    (["data.only_exported=true"], r"data\.only_exported: needs sandbox\.env\.sandbox\.bwrap\.images_dir"),
    (["data.task_ids=[]"], r"data\.task_ids: an empty list"),
    (["data.train_files=x.parquet", "data.task_ids=[a]"], r"data\.train_files\) is used as it is"),
])
def test_bad_task_selection_is_refused_by_name(tmp_path, monkeypatch, words, message, verl_schema_sources):
    monkeypatch.delenv("TERMINAL_AGENT_IMAGES_DIR", raising=False)
    with pytest.raises(ConfigError, match=message):
        plan(tmp_path, *words)


def test_unknown_task_ids_are_named(tmp_path, verl_schema_sources):
    with pytest.raises(ConfigError, match="data.task_ids: not among the tasks of data.tasks: no-such-task"):
        data_files.verl_task_split(plan(tmp_path, "data.task_ids=[no-such-task]").preset)


def test_a_ready_parquet_is_used_as_is(tmp_path, verl_schema_sources):
    parquet = tmp_path / "mine.parquet"
    parquet.write_bytes(b"PAR1")
    done = plan(tmp_path, f"data.train_files={parquet}", "data.tasks=null", "data.splits=null")
    data = done.backend_part().trainer_config.data
    assert data.train_files == str(parquet) == data.val_files
    assert verl_launch.hydra_key_sources(done)["data.train_files"] == "command line data.train_files"


@pytest.mark.parametrize("word, key", [
    ("model.attn_implementation=sdpa", "model.attn_implementation"),
    ("rollout.enforce_eager=true", "rollout.enforce_eager"),
    ("data.only_exported=true", "data.only_exported"),
    ("runtime_env.env_vars.A=1", "runtime_env.env_vars"),
])
def test_verl_path_keys_are_no_keys_of_a_local_preset(tmp_path, word, key):
    with pytest.raises(ConfigError, match=rf"^unknown key '{key.replace('.', '[.]')}"):
        load_preset("local_cpu_smoke", [f"trainer.output_dir={tmp_path}", word])


def test_a_run_whose_epochs_end_before_its_steps_is_refused(tmp_path, verl_schema_sources):
    done = plan(tmp_path, "trainer.total_epochs=1", "data.task_ids=[fix-stats-script,count-log-levels,"
                "csv-to-json-summary,log-errors-per-hour,extract-unique-emails,top-client-ips,slow-requests,"
                "exception-report,make-project-tree]")
    with pytest.raises(ConfigError, match=r"trainer\.total_epochs: 1 epoch\(s\) of 1 step\(s\) \(8 train tasks / 8\) "
                                          r"end before trainer\.total_training_steps 21"):
        data_files.write_parquet_files(done)
