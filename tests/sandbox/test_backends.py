"""The sandbox backend registry and SandboxConfig.backend."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import Sandbox
from terminal_agent.sandbox.backends import SANDBOX_BACKENDS, start_sandbox
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import TaskLimits


def test_registry_holds_docker_bwrap_and_ray():
    assert SANDBOX_BACKENDS.names() == ["bwrap", "docker", "ray"]
    with pytest.raises(ConfigError, match="valid: bwrap, docker, ray"):
        SANDBOX_BACKENDS.get("podman")


def test_unknown_backend_in_config_names_the_key_and_the_valid_ones():
    with pytest.raises(ValidationError) as caught:
        SandboxConfig(backend="podman")
    assert "backend" in str(caught.value) and "bwrap, docker, ray" in str(caught.value)
    assert SandboxConfig().backend == "docker"


@pytest.mark.docker
def test_start_sandbox_with_the_docker_backend(docker_client):
    sandbox = start_sandbox(SandboxConfig(), "terminal-agent/base:bookworm", TaskLimits(), run_id="test-backends")
    try:
        assert isinstance(sandbox, Sandbox)
        assert sandbox.exec("echo via-registry", 10).output == "via-registry\n"
    finally:
        sandbox.close()
