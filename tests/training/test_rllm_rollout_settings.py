"""The verl preset's ``trainer.harbor_rollouts`` reaches the rLLM Workflow as typed settings (``workflow_args``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.training.verl.rllm_rollout_trials import RllmRolloutTrialsSettings
from terminal_agent.training.local.config import LocalTrainingConfig, local_preset_problems
from terminal_agent.training.preset_config import load_preset
from terminal_agent.training.episode_args import harbor_rollouts_args_for
from terminal_agent.training.verl.overrides import split_overrides


def test_the_verl_preset_sets_the_workflows_rollout_trials():
    overrides = ["trainer.harbor_rollouts.every_n_steps=5", "trainer.harbor_rollouts.only_groups_with_variance=true",
                 "rollout.n=4"]
    preset_keys, raw = split_overrides(overrides)
    assert preset_keys == overrides and raw == []  # preset keys, not raw verl keys
    preset = load_preset("verl_1gpu", preset_keys)
    settings = RllmRolloutTrialsSettings.model_validate(harbor_rollouts_args_for(preset))
    assert Path(settings.run_dir).is_absolute() and Path(settings.run_dir) == preset.run_dir.resolve()
    assert settings.group_size == 4 and settings.retention.every_n_steps == 5
    assert settings.retention.only_groups_with_variance and settings.retention.max_disk_mb == 2000
    assert settings.rejection_sample is preset.algorithm.reject_zero_variance_groups
    assert [s for s in range(1, 12) if settings.retention.keeps_step(s)] == [1, 5, 10]
    off = load_preset("verl_1gpu", ["trainer.harbor_rollouts.enabled=false"])
    assert harbor_rollouts_args_for(off) is None


def test_bad_retention_values_and_a_local_preset_are_refused_by_key():
    with pytest.raises(ConfigError, match="every_n_steps"):
        load_preset("verl_1gpu", ["trainer.harbor_rollouts.every_n_steps=0"])
    with pytest.raises(ConfigError, match="max_disk_mb"):
        load_preset("verl_1gpu", ["trainer.harbor_rollouts.max_disk_mb=-1"])
    local = load_preset("local_cpu_smoke", ["trainer.harbor_rollouts.every_n_steps=3"])  # one key for both trainers
    assert local_preset_problems(local) == []
    assert LocalTrainingConfig.from_preset(local).harbor_rollouts.every_n_steps == 3
    with pytest.raises(ConfigError, match="unknown key 'local.harbor_rollouts.every_n_steps'"):
        load_preset("local_cpu_smoke", ["local.harbor_rollouts.every_n_steps=3"])
