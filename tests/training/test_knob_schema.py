"""One declaration per training knob: the preset schema declares it, the local config and the samplers derive it.

A field of :class:`LocalTrainingConfig` that is a preset key takes its default, bounds and docstring
from the preset schema (``preset_knob``); a default of its own is a ``local_default`` with its reason,
and the list of those is pinned here, so a new difference is a decision, not a drift. The embedded
model's and the local samplers' sampling settings are the fields of one base model.
"""

from __future__ import annotations

from pydantic import BaseModel

from terminal_agent.models.batched_generation import BatchedGenerationConfig
from terminal_agent.models.continuous_batching import ContinuousBatchingConfig
from terminal_agent.models.embedded import EmbeddedModelConfig
from terminal_agent.models.local_sampler_base import CARRIED_FROM_EMBEDDED
from terminal_agent.models.sampling_settings import SamplingSettings
from terminal_agent.models.vllm_sampler import VLLMSamplerConfig
from terminal_agent.training.local.config import PRESET_KEY_OF_FIELD, LocalTrainingConfig, preset_field
from terminal_agent.training.preset_config import TrainingPreset, preset_from_mapping

#: Fields of the local config whose default differs from the preset key's on purpose (each says why in
#: ``local/config.py``; docs/training.md lists them). Adding one here is the decision to let them differ.
INTENTIONAL_LOCAL_DEFAULTS = {
    "model_path", "group_size", "tasks_per_step", "max_turns", "max_response_length_per_turn", "max_model_len",
    "trajectory_timeout_s", "concurrency", "lr", "steps", "save_freq", "keep_checkpoints", "test_freq",
    "val_before_train",
}
#: Fields of the local config that no preset key sets (they keep their defaults under a preset).
NOT_PRESET_KEYS = {"weight_decay", "mask_truncated"}

#: Settings that several samplers have, each its own knob on purpose (the sampler decides what it means).
PER_SAMPLER_KNOBS = {
    "max_batch_size": "rows decoding at once: the batched sampler decodes a gathered batch to its end (32), the "
                      "continuous one and vLLM admit calls into free slots (64)",
    "gather_window_s": "the batched sampler waits for a batch it then runs to the end (0.05 s); the continuous "
                       "one only before its first prefill, later calls join running rows (0.02 s)",
    "max_gather_s": "the cap on that wait, per sampler for the same reason (0.25 s, 0.1 s)",
}

SAMPLER_CONFIGS = (EmbeddedModelConfig, BatchedGenerationConfig, ContinuousBatchingConfig, VLLMSamplerConfig)


def _kind(name: str) -> str:
    extra = LocalTrainingConfig.model_fields[name].json_schema_extra
    if not isinstance(extra, dict) or "preset_key" not in extra:
        return "own"
    return "local_default" if "local_default" in extra else "converted" if "converted" in extra else "derived"


def _default(info) -> object:
    return info.get_default(call_default_factory=True)


def _preset_leaf_names(model: type[BaseModel] = TrainingPreset) -> set[str]:
    names: set[str] = set()
    for name, info in model.model_fields.items():
        candidates = [info.annotation, *getattr(info.annotation, "__args__", ())]
        sub = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        names |= _preset_leaf_names(sub) if sub is not None and sub is not model else {name}
    return names


def test_a_local_field_is_a_preset_key_declared_there_or_one_of_the_listed_exceptions():
    kinds = {name: _kind(name) for name in LocalTrainingConfig.model_fields}
    assert {name for name, kind in kinds.items() if kind == "own"} == NOT_PRESET_KEYS
    assert not NOT_PRESET_KEYS & _preset_leaf_names(), "a field the preset declares is re-declared in the local config"
    for name, kind in kinds.items():
        if kind != "own":
            key = LocalTrainingConfig.model_fields[name].json_schema_extra["preset_key"]
            preset_field(key)  # the key exists in the preset schema
            if name != "sandbox":
                assert PRESET_KEY_OF_FIELD[name] == key


def test_derived_knobs_carry_the_preset_default_bounds_and_docstring():
    derived = [name for name in LocalTrainingConfig.model_fields if _kind(name) == "derived"]
    assert len(derived) >= 30
    for name in derived:
        local = LocalTrainingConfig.model_fields[name]
        preset = preset_field(PRESET_KEY_OF_FIELD[name])
        assert _default(local) == _default(preset), name
        assert [repr(bound) for bound in local.metadata] == [repr(bound) for bound in preset.metadata], name
        assert local.description and local.description == preset.description, name


def test_local_defaults_are_the_listed_intentional_differences_each_with_its_reason():
    local_defaults = {name for name in LocalTrainingConfig.model_fields if _kind(name) == "local_default"}
    assert local_defaults == INTENTIONAL_LOCAL_DEFAULTS
    for name in local_defaults:
        local = LocalTrainingConfig.model_fields[name]
        preset = preset_field(PRESET_KEY_OF_FIELD[name])
        assert len(local.json_schema_extra["local_default"]) > 20, name
        assert local.description, name
        differs = preset.is_required() or _default(local) != _default(preset) or (
            [repr(b) for b in local.metadata] != [repr(b) for b in preset.metadata])
        assert differs, f"{name}: same default and bounds as {PRESET_KEY_OF_FIELD[name]}: derive it (preset_knob)"


def test_a_preset_that_leaves_a_knob_unset_gives_the_local_trainer_the_direct_builds_default():
    preset = preset_from_mapping({
        "name": "knobs", "backend": "local", "model": {"path": "embedded"},
        "batch": {"train_batch_size": 1, "ppo_mini_batch_size": 1},
        "lengths": {"max_prompt_length": 512, "max_response_length_per_turn": 64, "max_model_len": 1024},
        "local": {},
    })
    from_preset, direct = LocalTrainingConfig.from_preset(preset), LocalTrainingConfig()
    derived = [name for name in LocalTrainingConfig.model_fields if _kind(name) == "derived"]
    assert {name: getattr(from_preset, name) for name in derived} == {name: getattr(direct, name) for name in derived}
    assert (from_preset.lr, direct.lr) == (1e-6, 1e-4)  # the one learning rate per backend, on purpose


def test_sampling_settings_are_declared_once_and_shared_by_every_in_process_sampler():
    shared = set(SamplingSettings.model_fields)
    assert CARRIED_FROM_EMBEDDED == tuple(SamplingSettings.model_fields)
    seen: dict[str, int] = {}
    for config in SAMPLER_CONFIGS:
        assert issubclass(config, SamplingSettings), config
        for klass in config.__mro__[: config.__mro__.index(SamplingSettings)]:
            redeclared = shared & set(vars(klass).get("__annotations__", {}))
            assert not redeclared, f"{klass.__name__} re-declares {sorted(redeclared)}"
        for name in config.model_fields:
            seen[name] = seen.get(name, 0) + 1
    in_several = {name for name, count in seen.items() if count > 1}
    assert in_several - set(PER_SAMPLER_KNOBS) == shared, (
        f"declared in several sampler configs: {sorted(in_several - shared - set(PER_SAMPLER_KNOBS))}")
    assert all(config().model_dump(include=shared) == SamplingSettings().model_dump() for config in SAMPLER_CONFIGS)
