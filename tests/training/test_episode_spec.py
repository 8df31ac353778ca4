"""The episode spec: derived once from a preset, the Workflow's arguments are its serialisation, read back equal."""

from __future__ import annotations

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.rollout.episode_spec import WORKFLOW_ARG_KEYS, EpisodeSpec
from terminal_agent.tasks.model import TaskLimits
from terminal_agent.training.episode_args import workflow_args_for
from terminal_agent.training.local.config import LocalTrainingConfig, local_preset_problems
from terminal_agent.training.preset_config import load_preset, preset_names


@pytest.mark.parametrize("name", preset_names())
def test_workflow_args_round_trip_to_an_equal_spec(name):
    preset = load_preset(name)
    if preset.sandbox.backend == "auto":  # the launch resolves it first (launcher.resolve_sandbox_backend)
        preset = load_preset(name, ["sandbox.backend=docker"])
    spec = EpisodeSpec.from_preset(preset)
    args = spec.to_workflow_args()
    assert EpisodeSpec.from_workflow_args(args) == spec
    assert EpisodeSpec.from_workflow_args(args).to_workflow_args() == args
    assert {key: value for key, value in workflow_args_for(preset).items() if key in WORKFLOW_ARG_KEYS} == args
    assert spec.max_steps == spec.env.max_steps == preset.agent.max_turns
    assert spec.env.sandbox.backend == preset.sandbox.backend
    assert spec.env.reward == preset.reward


def test_the_preset_env_section_reaches_the_spec_whole():
    preset = load_preset("prod_32b_2x8_h100", ["sandbox.env.actions={max_consecutive_error_turns: 2}",
                                               "sandbox.env.grading={startup_grace_s: 9}"])
    spec = EpisodeSpec.from_preset(preset)
    assert spec.env.sandbox.backend == "ray" and spec.env.sandbox.ray.max_sandboxes_per_node == 80
    assert spec.env.actions.max_consecutive_error_turns == 2 and spec.env.grading.startup_grace_s == 9
    args = spec.to_workflow_args()
    assert args["env_args"]["actions"] == {"max_consecutive_error_turns": 2}
    assert "bwrap" not in args["env_args"]["sandbox"]  # a section the config filled with defaults is not shown
    assert EpisodeSpec.from_workflow_args(args) == spec


@pytest.mark.parametrize("args, key", [
    ({"max_stepz": 3}, "workflow_args.max_stepz"),
    ({"max_steps": 0}, "workflow_args.max_steps"),
    ({"env_args": {"sandbox": {"pool_size": -1}}}, "workflow_args.env_args.sandbox.pool_size"),
    ({"env_args": {"no_such_setting": 1}}, "workflow_args.env_args.no_such_setting"),
    ({"agent_args": {"keep_last_turns": 0}}, "workflow_args.agent_args.keep_last_turns"),
])
def test_a_bad_workflow_arg_is_named(args, key):
    with pytest.raises(ConfigError) as raised:
        EpisodeSpec.from_workflow_args(args)
    assert str(raised.value).startswith(f"{key}: ")


@pytest.mark.parametrize("override, key", [
    ("sandbox.env.sandbox.bwrap.no_such_key=1", "sandbox.env.sandbox.bwrap.no_such_key"),
    ("sandbox.env.no_such_setting=1", "sandbox.env.no_such_setting"),
    ("sandbox.env.grading={startup_grace_s: -1}", "sandbox.env.grading.startup_grace_s"),
])
def test_a_bad_preset_env_value_names_the_preset_key(override, key):
    with pytest.raises(ConfigError) as raised:
        EpisodeSpec.from_preset(load_preset("local_cpu_smoke", [override]))
    assert str(raised.value).startswith(f"{key}: ")


def test_the_agent_engine_and_deadline_come_from_the_spec():
    spec = EpisodeSpec.from_preset(load_preset("local_cpu_smoke"))
    agent = spec.agent_config(training=True)
    assert agent.training and agent.compaction is False
    settings = spec.episode_settings(sampling={"temperature": 0.5}, stop_on_output_limit=True)
    assert settings.max_steps == spec.max_steps and settings.max_context_tokens == spec.max_context_tokens
    assert settings.sampling == {"temperature": 0.5, "max_tokens": spec.max_tokens_per_turn}
    limits = TaskLimits(agent_timeout_s=10, test_timeout_s=20)
    assert spec.timeout is not None and spec.deadline_s(limits) == spec.timeout + 20 + 60
    assert spec.env_config(run_id="r1").run_id == "r1" and spec.env.run_id is None
    assert spec.with_max_steps(3).env.max_steps == 3


def test_the_local_trainer_builds_from_the_preset_spec_and_honours_the_whole_env_section():
    preset = load_preset("local_cpu_smoke", ["sandbox.env.actions={max_consecutive_error_turns: 2}",
                                             "sandbox.env.judge={backend: none}"])
    assert local_preset_problems(preset) == []
    config = LocalTrainingConfig.from_preset(preset)
    assert config.episode == EpisodeSpec.from_preset(preset)
    assert config.episode.env.actions.max_consecutive_error_turns == 2
    assert config.episode.env.reward == preset.reward and config.episode.env.sandbox.backend == preset.sandbox.backend
    assert (config.episode.max_steps, config.max_tokens_per_turn, config.episode.max_context_tokens,
            config.episode.timeout) == (preset.agent.max_turns, preset.lengths.max_response_length_per_turn,
                                        preset.lengths.max_model_len, preset.agent.trajectory_timeout_s)
    assert "episode" not in config.model_dump()  # the dry run shows it as workflow_args, once
    assert config.run_record()["episode"] == EpisodeSpec.from_preset(preset).to_workflow_args()
    assert [p.split(":")[0] for p in local_preset_problems(load_preset("local_cpu_smoke", ["sandbox.env.run_id=x"]))] \
        == ["sandbox.env.run_id"]
    with pytest.raises(ConfigError, match="^episode: the preset's episode spec"):
        LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke"), episode=EpisodeSpec.small(2))
    with pytest.raises(ConfigError, match="^max_turns: Extra inputs are not permitted"):  # the spec's, not a field
        LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke"), max_turns=2)


def test_a_direct_local_build_has_the_small_spec_unless_given_one():
    from terminal_agent.rewards.reward import RewardConfig
    from terminal_agent.sandbox.config import SandboxConfig

    spec = LocalTrainingConfig().episode
    assert spec == EpisodeSpec.small()
    assert (spec.max_steps, spec.env.max_steps, spec.max_tokens_per_turn, spec.max_context_tokens, spec.timeout,
            spec.compaction) == (4, 4, 128, 2048, 600.0, False)
    assert spec.env.sandbox == SandboxConfig() and spec.env.reward == RewardConfig(test_weight=1.0, judge_weight=0.0)
    sandbox = SandboxConfig(backend="bwrap")
    config = LocalTrainingConfig(episode=EpisodeSpec.small(3, sandbox=sandbox, max_tokens_per_turn=64, timeout=30.0))
    assert (config.episode.max_steps, config.episode.env.max_steps, config.max_tokens_per_turn,
            config.episode.timeout) == (3, 3, 64, 30.0)
    assert config.episode.env.sandbox.backend == "bwrap"
    with pytest.raises(ValueError, match="episode spec needs max_tokens_per_turn"):  # the samplers' default cap
        LocalTrainingConfig(episode=EpisodeSpec(max_steps=3))
