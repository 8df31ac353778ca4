"""Presets: every packaged preset is sound (typed, arithmetic, level 1 against the real verl/rLLM
YAML, level 2 with verl's own validate_config), and every validation rule refuses what it should."""

from __future__ import annotations

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.training.verl.geometry_checks import GEOMETRY_RULES, check_geometry, require_sound_geometry
from terminal_agent.training.preset_config import load_preset, preset_names
from terminal_agent.training.verl.overrides import HydraOverride, verl_overrides

SEED_PRESETS = ["test_8b_2_gpus", "runway_32b_4_gpus", "prod_32b_8_gpus", "prod_32b_2x8_h100", "prod_32b_4x8_h100",
                "verl_1gpu"]
LOCAL_PRESETS = ["local_cpu_smoke", "local_1gpu"]
VERL_PRESETS = [name for name in preset_names() if load_preset(name).backend == "verl"]


def compose(preset):
    from terminal_agent.training.verl.schema import compose_trainer_config

    return compose_trainer_config(verl_overrides(preset, train_files="train.parquet", val_files="val.parquet"))


def test_every_named_preset_is_packaged():
    assert set(SEED_PRESETS + LOCAL_PRESETS) <= set(preset_names())
    assert {load_preset(name).backend for name in LOCAL_PRESETS} == {"local"}


@pytest.mark.parametrize("name", LOCAL_PRESETS)
def test_local_preset_plan_builds_env_and_agent(name, tmp_path):
    from terminal_agent.training.launcher import plan_launch

    plan = plan_launch(load_preset(name, [f"trainer.output_dir={tmp_path}"]))
    assert plan.workflow_args["max_tokens_per_turn"] == plan.preset.lengths.max_response_length_per_turn
    assert plan.preset.local is not None and plan.preset.local.lora.rank >= 1


@pytest.mark.parametrize("name", preset_names())
def test_preset_is_typed_and_arithmetically_sound(name):
    preset = load_preset(name)
    assert preset.backend == "local" or check_geometry(preset) == []  # verl's GPU rules (the local backend has none)
    assert preset.algorithm.adv_estimator == "grpo"
    assert preset.algorithm.lr == pytest.approx(1e-6) or preset.backend == "local"
    assert preset.agent.compaction is False
    assert preset.trainer.wandb_mode == "offline"
    assert preset.lengths.max_model_len >= preset.lengths.max_prompt_length + preset.lengths.max_response_length_per_turn


@pytest.mark.parametrize("name", VERL_PRESETS)
def test_preset_level1_composes_against_verl_and_rllm_schema(name, verl_schema_sources, tmp_path):
    from terminal_agent.training.launcher import plan_launch

    preset = load_preset(name, [f"trainer.output_dir={tmp_path}"])
    plan = plan_launch(preset, level2=False)  # also builds the env and agent from the workflow args
    config = plan.backend_part().trainer_config
    actor = config.actor_rollout_ref.actor
    rollout = config.actor_rollout_ref.rollout
    # the keys verl 0.9.1 really reads, with the preset's values
    assert actor.optim.clip_grad == preset.algorithm.grad_clip
    assert actor.optim.lr == preset.algorithm.lr
    assert config.algorithm.adv_estimator == "grpo"
    assert rollout.max_model_len == preset.lengths.max_model_len  # the whole context, not one reply
    assert config.data.max_prompt_length + config.data.max_response_length == preset.lengths.max_model_len
    assert actor.ulysses_sequence_parallel_size == preset.parallel.sequence_parallel
    assert (config.data.train_batch_size * rollout.n) % (config.trainer.n_gpus_per_node * config.trainer.nnodes) == 0
    assert config.rllm.rejection_sample.enable is preset.algorithm.reject_zero_variance_groups
    assert config.rllm.workflow.workflow_args.timeout == preset.agent.trajectory_timeout_s


def test_judge_variant_mixes_065_035():
    preset = load_preset("prod_32b_8_gpus_judge")
    base = load_preset("prod_32b_8_gpus")
    assert (preset.reward.test_weight, preset.reward.judge_weight) == (0.65, 0.35)
    assert preset.batch == base.batch and preset.cluster == base.cluster


@pytest.mark.slow
def test_every_verl_preset_passes_verl_validate_config_and_a_bad_geometry_does_not(verl_python):
    """Level 2: verl's own validate_config + dataclass conversion, every preset in one interpreter.

    The seed's prod geometry (1 task x 12 episodes on 8 GPUs, which our arithmetic refuses) goes
    last: the answers come in order and the first refusal is raised, so the refusal being that
    one shows every preset before it passed.
    """
    from terminal_agent.training.verl.schema import validate_many_with_verl

    seed = load_preset("prod_32b_8_gpus", ["batch.train_batch_size=1", "batch.ppo_mini_batch_size=1", "rollout.n=12"])
    configs = [compose(load_preset(name)) for name in VERL_PRESETS] + [compose(seed)]
    with pytest.raises(ConfigError, match=r"verl 0\.9\.1 .*real_train_batch_size \(12\) must be divisible .*\(8\)"):
        validate_many_with_verl(configs, python=verl_python)


# --- one mutation per rule ----------------------------------------------------------------------
MUTATIONS = {
    # the seed's prod_32b_8_gpus: 1 task x 12 episodes on 8 GPUs
    "batch_divisible": ("prod_32b_8_gpus", ["batch.train_batch_size=1", "batch.ppo_mini_batch_size=1", "rollout.n=12"],
                        "batch.train_batch_size"),
    "mini_batch": ("prod_32b_8_gpus", ["batch.ppo_mini_batch_size=3"], "batch.ppo_mini_batch_size"),
    # the seed's Ulysses SP across two nodes
    "sp_in_node": ("prod_32b_2x8_h100", ["parallel.sequence_parallel=16"], "parallel.sequence_parallel"),
    # Qwen2.5-7B has 28 heads: SP 8 cannot split them
    "heads_by_sp": ("prod_32b_8_gpus", ["model.path=Qwen/Qwen2.5-7B-Instruct", "parallel.sequence_parallel=8"],
                    "parallel.sequence_parallel"),
    "tp_replicas": ("prod_32b_8_gpus", ["parallel.rollout_replicas=3"], "parallel.tensor_parallel"),
    # the padded (sdpa) path of verl_1gpu with Ulysses SP
    "sp_remove_padding": ("prod_32b_8_gpus", ["model.use_remove_padding=false"], "model.use_remove_padding"),
    # the seed's "4k per response" passed as the whole context
    "lora_rank": ("runway_32b_4_gpus", ["model.lora_rank=1024"], "model.lora_rank"),
}


def test_every_rule_has_a_mutation():
    assert set(MUTATIONS) == set(GEOMETRY_RULES.names())


@pytest.mark.parametrize("rule", sorted(MUTATIONS))
def test_mutation_is_refused_naming_the_key(rule):
    name, overrides, key = MUTATIONS[rule]
    preset = load_preset(name, overrides)
    problems = check_geometry(preset)
    assert [problem.rule for problem in problems] == [rule]
    assert problems[0].key == key
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        require_sound_geometry(preset)


def test_a_context_without_room_for_one_reply_is_refused_by_the_lengths_section():
    with pytest.raises(ConfigError, match=r"^preset prod_32b_8_gpus: lengths: max_model_len 4096 \(the whole context\)"):
        load_preset("prod_32b_8_gpus", ["lengths.max_model_len=4096"])


def test_unknown_model_heads_name_model_path():
    with pytest.raises(ConfigError, match="model.path"):
        check_geometry(load_preset("prod_32b_8_gpus", ["model.path=nobody/unknown-model"]))


def test_local_model_directory_heads_are_read_from_config_json(tmp_path):
    (tmp_path / "config.json").write_text('{"num_attention_heads": 12, "num_key_value_heads": 4}')
    preset = load_preset("prod_32b_8_gpus", [f"model.path={tmp_path}", "parallel.sequence_parallel=8"])
    assert [problem.rule for problem in check_geometry(preset)] == ["heads_by_sp"]


# --- typed preset: keys and values ----------------------------------------------------------------
@pytest.mark.parametrize("override, key", [
    ("batch.trian_batch_size=4", "batch.trian_batch_size"),
    ("bogus=1", "bogus"),
    ("algorithm.adv_estimator=loop", "algorithm.adv_estimator"),  # the seed's estimator
    ("algorithm.loss_agg_mode=mean", "algorithm.loss_agg_mode"),
    ("rollout.n=abc", "rollout.n"),
    ("rollout.n=1", "rollout.n"),
    ("rollout.top_p=1.5", "rollout.top_p"),
    ("trainer.resume=resume_path", "trainer"),
    ("local.steps=3", "local"),  # a local section on a verl preset
])
def test_bad_override_names_the_key(override, key):
    with pytest.raises(ConfigError) as caught:
        load_preset("prod_32b_8_gpus", [override])
    assert key in str(caught.value)


def test_override_types_follow_yaml_and_the_model():
    preset = load_preset("prod_32b_8_gpus", ["rollout.n=16", "algorithm.lr=2e-6", "trainer.loggers=[console]",
                                             "trainer.total_training_steps=null", "offload.param=false"])
    assert (preset.rollout.n, preset.algorithm.lr, preset.trainer.loggers) == (16, 2e-6, ["console"])
    assert preset.trainer.total_training_steps is None and preset.offload.param is False


def test_preset_file_path_with_extends(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: test_8b_2_gpus\ndescription: mine\nrollout: {n: 8}\n")
    preset = load_preset(path)
    assert (preset.name, preset.rollout.n, preset.model.path) == ("mine", 8, "Qwen/Qwen3-8B")
    with pytest.raises(ConfigError, match="unknown preset 'nope'"):
        load_preset("nope")


# --- level 1 refuses what the schema does not have --------------------------------------------------
def test_level1_refuses_a_key_verl_does_not_have(verl_schema_sources):
    from terminal_agent.training.verl.schema import compose_trainer_config

    good = verl_overrides(load_preset("test_8b_2_gpus"), train_files="t.parquet", val_files=None)
    stale = HydraOverride("actor_rollout_ref.actor.optim.grad_clip_norm", 1.0, "algorithm.grad_clip")
    with pytest.raises(ConfigError, match=r"algorithm\.grad_clip: sets 'actor_rollout_ref\.actor\.optim\.grad_clip_norm'"):
        compose_trainer_config([*good, stale])


def test_level1_compose_sets_values_through_hydra_grammar(verl_schema_sources):
    config = compose(load_preset("prod_32b_8_gpus", ["algorithm.grad_clip=0.5", "trainer.experiment=a,b",
                                                     "trainer.loggers=[console]"]))
    assert config.actor_rollout_ref.actor.optim.clip_grad == 0.5
    assert config.trainer.experiment_name == "a,b"  # quoted: not a Hydra sweep
    assert list(config.trainer.logger) == ["console"]


def test_the_step_speed_keys_reach_verl_and_rllm_config(verl_schema_sources):
    """batch.max_tokens_per_gpu, model.fused_kernels and algorithm.old_log_probs, composed against the real schemas:
    dynamic batch sizes in the three roles verl requires to agree, the fused log-prob path with its backend, and
    rLLM's rollout-correction bypass."""
    plain = compose(load_preset("verl_1gpu", ["batch.max_tokens_per_gpu=null"]))
    assert plain.actor_rollout_ref.actor.use_dynamic_bsz is False
    assert plain.actor_rollout_ref.model.use_fused_kernels is False
    assert plain.algorithm.rollout_correction.bypass_mode is False
    fast = compose(load_preset("verl_1gpu", ["batch.max_tokens_per_gpu=12000", "model.fused_kernels=torch",
                                             "algorithm.old_log_probs=sampler"]))
    roles = fast.actor_rollout_ref
    assert roles.actor.use_dynamic_bsz and roles.actor.ppo_max_token_len_per_gpu == 12000
    assert roles.rollout.log_prob_use_dynamic_bsz and roles.rollout.log_prob_max_token_len_per_gpu == 24000
    assert roles.ref.log_prob_use_dynamic_bsz and roles.ref.log_prob_max_token_len_per_gpu == 24000
    assert roles.model.use_fused_kernels is True and roles.model.fused_kernel_options.impl_backend == "torch"
    assert fast.algorithm.rollout_correction.bypass_mode is True


@pytest.mark.parametrize("override", ["model.fused_kernels=torch", "algorithm.old_log_probs=sampler",
                                      "batch.max_tokens_per_gpu=8192"])
def test_the_verl_speed_keys_are_no_keys_of_a_local_preset(override):
    with pytest.raises(ConfigError, match=rf"^unknown key '{override.split('=')[0]}'"):
        load_preset("local_1gpu", [override])
