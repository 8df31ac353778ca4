"""Training knobs: the local config's own defaults differ from a preset's only where listed, each field names
the preset key it comes from, and the samplers' shared settings are declared once.

:class:`LocalTrainingConfig` is the local trainer's config: its own fields plus the episode spec;
``from_preset`` fills the fields from a ``backend: local`` preset, field by field, and takes the preset's episode
spec. A direct build (tests, the experiment command, model loading) is a small quick run (its spec
``EpisodeSpec.small()``), so a few defaults differ on purpose: the lists are pinned here, so a new difference is
a decision, not a drift. The embedded model's and the local samplers' sampling settings are the fields of one
base model.
"""

from __future__ import annotations

import re

from terminal_agent.models.batched_generation import BatchedGenerationConfig
from terminal_agent.models.continuous_batching import ContinuousBatchingConfig
from terminal_agent.models.embedded import EmbeddedModelConfig
from terminal_agent.models.local_sampler_base import CARRIED_FROM_EMBEDDED
from terminal_agent.models.sampling_settings import SamplingSettings
from terminal_agent.models.vllm_sampler import VLLMSamplerConfig
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.preset_sections import LocalPreset
from terminal_agent.training.preset_config import is_preset_key, preset_from_mapping

#: Fields whose direct-build default differs from what a preset that leaves the key unset gives, on purpose (each
#: docstring says why; docs/training.md lists them). Adding one here is the decision to let them differ.
INTENTIONAL_LOCAL_DEFAULTS = {
    "group_size", "concurrency", "lr", "steps", "save_freq", "keep_checkpoints", "test_freq", "val_before_train",
}
#: The same for the episode spec: ``EpisodeSpec.small()`` (a direct build's) against a preset's spec.
INTENTIONAL_EPISODE_DEFAULTS = {"max_steps", "timeout"}  # agent.max_turns, agent.trajectory_timeout_s
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


def test_every_field_names_the_preset_key_it_comes_from():
    for name, field in LocalTrainingConfig.model_fields.items():
        named = [key for key in re.findall(r"``([a-z_.]+)``", field.description or "")
                 if is_preset_key(key.split("."), LocalPreset)]
        assert bool(named) != (name in NOT_PRESET_KEYS), f"{name}: {field.description!r}"


def test_a_preset_that_leaves_a_knob_unset_gives_the_direct_builds_default_but_where_listed():
    preset = preset_from_mapping({
        "name": "knobs", "backend": "local", "model": {"path": "embedded"},
        "batch": {"train_batch_size": 1, "ppo_mini_batch_size": 1},
        "lengths": {"max_prompt_length": 512, "max_response_length_per_turn": 128, "max_model_len": 2048},
        "local": {},
    })
    from_preset, direct = LocalTrainingConfig.from_preset(preset), LocalTrainingConfig()
    differ = {name for name in LocalTrainingConfig.model_fields if getattr(from_preset, name) != getattr(direct, name)}
    # the experiment is the preset's name (a direct build has none); the episode specs differ where listed
    assert differ == INTENTIONAL_LOCAL_DEFAULTS | {"experiment", "episode"}
    spec, small = from_preset.episode, direct.episode
    assert {name for name in EpisodeSpec.model_fields if getattr(spec, name) != getattr(small, name)} \
        == INTENTIONAL_EPISODE_DEFAULTS | {"env"}
    assert spec.env == small.with_max_steps(spec.max_steps).env  # the env differs by its turns only
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
