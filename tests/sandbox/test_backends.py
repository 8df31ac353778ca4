"""The sandbox backend registry and SandboxConfig.backend."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import Sandbox
from terminal_agent.sandbox.backends import SANDBOX_BACKENDS, start_sandbox
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import TaskLimits


def test_registry_holds_docker_bwrap_and_ray():
    # a test may have registered a backend of its own (test_local_backend.py): the built-ins must be there
    assert {"bwrap", "docker", "ray"} <= set(SANDBOX_BACKENDS.names())
    with pytest.raises(ConfigError, match=f"valid: {', '.join(SANDBOX_BACKENDS.names())}$"):
        SANDBOX_BACKENDS.get("podman")


def test_unknown_backend_in_config_names_the_key_and_the_valid_ones():
    with pytest.raises(ValidationError) as caught:
        SandboxConfig(backend="podman")
    assert "backend" in str(caught.value) and ", ".join(SANDBOX_BACKENDS.names()) in str(caught.value)
    assert SandboxConfig().backend == "docker"


def test_reading_a_config_imports_no_backend():
    """The registry names its built-in backends by module path: a config (even one naming a backend) loads none."""
    code = ("import sys; from terminal_agent.sandbox.config import SandboxConfig; SandboxConfig(backend='ray'); "
            "print(sorted(m for m in sys.modules if m.endswith('.backend') or m.endswith('.sandbox.sandbox')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_built_in_backend_is_loaded_on_first_use_and_has_every_hook():
    for name in ("docker", "bwrap", "ray"):
        backend = SANDBOX_BACKENDS.get(name)
        for hook in ("resolve_task_image", "start", "list_leaked", "sweep_leaked", "capacity", "close"):
            assert callable(getattr(backend, hook)), (name, hook)
    assert set(SANDBOX_BACKENDS.loaded()) >= {"docker", "bwrap", "ray"}


@pytest.mark.docker
def test_start_sandbox_with_the_docker_backend(docker_client):
    sandbox = start_sandbox(SandboxConfig(), "terminal-agent/base:bookworm", TaskLimits(), run_id="test-backends")
    try:
        assert isinstance(sandbox, Sandbox)
        assert sandbox.exec("echo via-registry", 10).output == "via-registry\n"
    finally:
        sandbox.close()
