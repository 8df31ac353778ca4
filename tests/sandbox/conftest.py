"""Fixtures of the sandbox tests: the offline base image and shared sandboxes."""

from __future__ import annotations

import pytest

from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.sandbox import DockerSandbox
from terminal_agent.tasks.model import TaskLimits

BASE_IMAGE = "terminal-agent/base:bookworm"


@pytest.fixture(scope="session")
def base_image(docker_client):
    try:
        docker_client.images.get(BASE_IMAGE)
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{BASE_IMAGE} is missing ({exc}); build it with `terminal-agent images base`")
    return BASE_IMAGE


@pytest.fixture(scope="module")
def small_sandbox(base_image):
    """One sandbox with tight limits shared by a module's tests (256 MiB, 64 pids, 1 cpu)."""
    sandbox = DockerSandbox.start(
        base_image,
        limits=TaskLimits(memory_mb=256, pids=64, cpus=1.0),
        config=SandboxConfig(output_cap_bytes=16384),
        run_id="test-sandbox",
    )
    yield sandbox
    sandbox.close()
