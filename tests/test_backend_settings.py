"""Backends own their settings: ``SandboxConfig`` and ``JudgeConfig`` hold one section per registered backend with
settings, under the keys users write (``sandbox.bwrap.images_dir``, ``judge.claude_cli.executable``), validated by
the model the backend's registry line names; a backend registered at run time brings its section with no edit to
either config."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from terminal_agent.env import EnvConfig
from terminal_agent.errors import ConfigError
from terminal_agent.rewards.judge import JUDGE_BACKENDS, JudgeConfig
from terminal_agent.rewards.judge_backends.claude_cli_judge import ClaudeCliJudgeOptions, make_claude_cli_judge
from terminal_agent.sandbox.bwrap.settings import BwrapConfig, bwrap_settings
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.ray.settings import RaySandboxConfig, ray_settings
from terminal_agent.sandbox.registry import SANDBOX_BACKENDS


class PodSettings(BaseModel):
    """A plugin backend's settings."""

    model_config = ConfigDict(extra="forbid")

    namespace: str = "default"
    """Where its sandboxes go."""
    replicas: int = Field(1, ge=1)
    """How many."""


@pytest.fixture
def pod_backend() -> Iterator[str]:
    SANDBOX_BACKENDS.register("pod-runner", settings=PodSettings)(object())
    yield "pod-runner"
    SANDBOX_BACKENDS.unregister("pod-runner")


def test_the_keys_users_write_are_read_by_the_backends_typed():
    config = SandboxConfig.model_validate({"backend": "bwrap", "bwrap": {"images_dir": "/exports", "limits": "rlimit"},
                                           "ray": {"max_sandboxes_per_node": 7}})
    assert bwrap_settings(config) == BwrapConfig(images_dir="/exports", limits="rlimit")
    assert ray_settings(config).max_sandboxes_per_node == 7
    given = SandboxConfig(backend="bwrap", bwrap=BwrapConfig(state_dir="/state"))  # the model itself, in code
    assert bwrap_settings(given).state_dir == "/state"
    assert bwrap_settings(given.model_copy(update={"bwrap": BwrapConfig(state_dir="/other")})).state_dir == "/other"


def test_a_section_left_out_holds_the_defaults_and_the_dump_keeps_its_place():
    config = SandboxConfig()
    assert bwrap_settings(config) == BwrapConfig() and ray_settings(config) == RaySandboxConfig()
    switched = config.model_copy(update={"backend": "ray"})  # a backend picked later finds its settings
    assert ray_settings(switched) == RaySandboxConfig()
    dumped = config.model_dump(mode="json")
    assert list(dumped)[:4] == ["backend", "bwrap", "ray", "unset_cpus"]  # where the fixed sections were
    assert dumped["ray"]["host_resource"] == "terminal_agent_sandbox_host"
    assert SandboxConfig.model_validate(dumped) == config


@pytest.mark.parametrize(("data", "loc", "kind"), [
    ({"bwrap": {"limits": "cgroups"}}, ("sandbox", "bwrap", "limits"), "literal_error"),
    ({"bwrap": {"image_dir": "/x"}}, ("sandbox", "bwrap", "image_dir"), "extra_forbidden"),
    ({"ray": {"max_sandboxes_per_node": 0}}, ("sandbox", "ray", "max_sandboxes_per_node"), "greater_than_equal"),
    ({"ray": "many"}, ("sandbox", "ray"), "model_type"),
    ({"docker": {"pool": 1}}, ("sandbox", "docker"), "extra_forbidden"),  # docker has no settings
    ({"pool_sise": 3}, ("sandbox", "pool_sise"), "extra_forbidden"),
])
def test_a_bad_section_is_refused_naming_the_exact_key(data, loc, kind):
    with pytest.raises(ValidationError) as caught:
        EnvConfig.model_validate({"sandbox": data})
    first = caught.value.errors()[0]
    assert (first["loc"], first["type"]) == (loc, kind)


def test_a_backend_registered_at_run_time_brings_its_section(pod_backend):
    config = SandboxConfig.model_validate({"backend": pod_backend, "pod_runner": {"namespace": "ci"}})
    assert config.backend_settings(pod_backend, PodSettings) == PodSettings(namespace="ci")
    assert SandboxConfig().backend_settings(pod_backend, PodSettings) == PodSettings()
    with pytest.raises(ValidationError) as caught:
        SandboxConfig.model_validate({"pod_runner": {"replicas": 0}})
    assert caught.value.errors()[0]["loc"] == ("pod_runner", "replicas")
    with pytest.raises(ConfigError, match="the pod_runner section holds PodSettings, not BwrapConfig"):
        config.backend_settings(pod_backend, BwrapConfig)
    with pytest.raises(ConfigError, match="sandbox backend 'docker' declares no settings model"):
        config.backend_settings("docker", BwrapConfig)


def test_a_section_of_a_backend_gone_from_the_registry_is_unknown_again(pod_backend):
    SANDBOX_BACKENDS.unregister(pod_backend)
    try:
        with pytest.raises(ValidationError) as caught:
            SandboxConfig.model_validate({"pod_runner": {}})
        assert caught.value.errors()[0]["type"] == "extra_forbidden"
    finally:
        SANDBOX_BACKENDS.register(pod_backend, settings=PodSettings)(object())


def test_judge_sections_keep_their_keys_and_a_hyphenated_backend_reads_its_own(tmp_path):
    config = JudgeConfig.model_validate({"backend": "claude-cli", "claude_cli": {"executable": "/bin/true",
                                                                                "extra_args": ["--max-turns", "1"]},
                                         "litellm": {"api_base": "http://judge"}})
    assert config.backend_settings("claude-cli", ClaudeCliJudgeOptions).extra_args == ["--max-turns", "1"]
    assert make_claude_cli_judge(config).command()[-2:] == ["--max-turns", "1"]
    assert JudgeConfig.model_validate(config.model_dump()) == config
    with pytest.raises(ValidationError) as caught:
        EnvConfig.model_validate({"judge": {"local": {"num_threads": 0}}})
    assert caught.value.errors()[0]["loc"] == ("judge", "local", "num_threads")
    with pytest.raises(ValidationError) as caught:
        JudgeConfig.model_validate({"claude-cli": {"executable": "x"}})  # the section key is written with '_'
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_a_judge_backend_registered_at_run_time_brings_its_section():
    JUDGE_BACKENDS.register("pod-judge", settings=PodSettings)(lambda config, client: None)  # type: ignore[arg-type]
    try:
        config = JudgeConfig.model_validate({"backend": "pod-judge", "pod_judge": {"replicas": 3}})
        assert config.backend_settings("pod-judge", PodSettings).replicas == 3
    finally:
        JUDGE_BACKENDS.unregister("pod-judge")
