"""The launch's attention check for padding-free rows, and how the project's attention reaches verl.

This CPU machine has neither flash-attn nor a CUDA GPU, so both attentions that find packed rows themselves are
refused here, each naming what is missing; sdpa with Ulysses SP is refused anywhere; padded rows pass.
"""

from __future__ import annotations

import importlib.util

import pytest

from terminal_agent.errors import TrainingSetupError
from terminal_agent.training.preset_config import load_preset
from terminal_agent.training.verl.attention_checks import (
    PACKED_ATTENTION_MODULE,
    PACKED_ATTENTION_NAME,
    check_packed_attention,
    needs_packed_rows,
    packed_attention_report,
)
from terminal_agent.training.verl.overrides import verl_overrides
from terminal_agent.training.verl.worker_environment import VERL_EXTERNAL_MODULES, run_environment

PADDING_FREE_PRESETS = ["verl_1gpu", "test_8b_2_gpus", "runway_32b_4_gpus", "prod_32b_8_gpus", "prod_32b_8_gpus_judge",
                        "prod_32b_2x8_h100", "prod_32b_4x8_h100"]


def _no_cuda_here() -> bool:
    import torch

    return not torch.cuda.is_available()


needs_cpu_machine = pytest.mark.skipif(not _no_cuda_here(), reason="checks what a machine without CUDA refuses")


@pytest.mark.skipif(importlib.util.find_spec("flash_attn") is not None, reason="flash-attn is installed here")
def test_flash_attention_2_is_refused_without_flash_attn():
    preset = load_preset("test_8b_2_gpus", ["model.attn_implementation=flash_attention_2"])
    with pytest.raises(TrainingSetupError, match=r"(?s)flash_attention_2 needs the flash_attn package.*"
                                                 r"pip install flash-attn --no-build-isolation.*compiles CUDA.*"
                                                 rf"model\.attn_implementation={PACKED_ATTENTION_NAME}"):
        check_packed_attention(preset)


@needs_cpu_machine
def test_the_project_attention_is_refused_on_a_machine_without_cuda():
    preset = load_preset("verl_1gpu")
    assert preset.model.attn_implementation == PACKED_ATTENTION_NAME and needs_packed_rows(preset)
    report = packed_attention_report(preset)  # what a dry run on this machine can show, without raising
    assert report is not None and "no CUDA GPU is visible" in report
    with pytest.raises(TrainingSetupError, match=rf"{PACKED_ATTENTION_NAME}: no CUDA GPU is visible"):
        check_packed_attention(preset)


@pytest.mark.parametrize("attention", ["sdpa", "eager", "flex_attention"])
def test_an_attention_verl_cannot_split_is_refused_with_ulysses(attention):
    preset = load_preset("test_8b_2_gpus", [f"model.attn_implementation={attention}"])
    with pytest.raises(TrainingSetupError, match=rf"parallel\.sequence_parallel 2 with model\.attn_implementation "
                                                 rf"{attention}: verl's Ulysses patch covers flash attention only"):
        check_packed_attention(preset)


def test_padded_rows_need_no_packed_attention():
    preset = load_preset("verl_1gpu", ["model.attn_implementation=sdpa", "model.use_remove_padding=false"])
    assert not needs_packed_rows(preset) and packed_attention_report(preset) is None
    check_packed_attention(preset)
    # sdpa on packed rows without SP: transformers builds the block-diagonal mask itself (no cache in verl's call)
    check_packed_attention(load_preset("verl_1gpu", ["model.attn_implementation=sdpa"]))


@pytest.mark.parametrize("name", PADDING_FREE_PRESETS)
def test_every_padding_free_preset_picks_the_project_attention(name):
    preset = load_preset(name)
    assert needs_packed_rows(preset) and preset.model.attn_implementation == PACKED_ATTENTION_NAME


def test_the_project_attention_reaches_every_verl_worker():
    """verl imports ``external_lib`` where it builds a model config, and VERL_USE_EXTERNAL_MODULES on ``import
    verl``: both name the module that registers the attention; other attentions add neither."""
    preset = load_preset("verl_1gpu", ["runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=my_plugin"])
    keys = {override.key: override.value for override in verl_overrides(preset, train_files="t", val_files=None)}
    assert keys["actor_rollout_ref.model.external_lib"] == PACKED_ATTENTION_MODULE
    assert keys["actor_rollout_ref.model.override_config.attn_implementation"] == PACKED_ATTENTION_NAME
    assert run_environment(preset)[VERL_EXTERNAL_MODULES] == f"my_plugin,{PACKED_ATTENTION_MODULE}"
    padded = load_preset("verl_1gpu", ["model.attn_implementation=sdpa", "model.use_remove_padding=false"])
    padded_keys = {override.key for override in verl_overrides(padded, train_files="t", val_files=None)}
    assert "actor_rollout_ref.model.external_lib" not in padded_keys
    assert VERL_EXTERNAL_MODULES not in run_environment(padded)


def test_the_module_verl_imports_registers_the_attention_with_transformers():
    import importlib

    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    importlib.import_module(PACKED_ATTENTION_MODULE)
    assert PACKED_ATTENTION_NAME in AttentionInterface._global_mapping
    assert PACKED_ATTENTION_NAME in AttentionMaskInterface._global_mapping
