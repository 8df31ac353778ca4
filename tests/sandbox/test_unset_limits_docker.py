"""A Docker sandbox of a task that names no CPU quota or memory limit (``limits.cpus`` / ``memory_mb`` None,
tests/test_unset_limits.py): no quota, as Harbor gives none; the host policy sets one when configured."""

from __future__ import annotations

import pytest

from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import TaskLimits

UNSET = TaskLimits(cpus=None, memory_mb=None, pids=64)


@pytest.mark.docker
def test_a_docker_sandbox_of_an_unset_task_has_no_quota_and_the_policy_sets_one(base_image):
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox, docker_client

    with DockerSandbox.start(base_image, limits=UNSET, run_id="test-unset-limits") as sandbox:
        host = docker_client().api.inspect_container(sandbox.id)["HostConfig"]
        assert host["NanoCpus"] == 0 and host["Memory"] == 0 and host["PidsLimit"] == 64
        assert sandbox.exec("echo up", 10).output == "up\n"
    policy = SandboxConfig(unset_cpus=0.5, unset_memory_mb=300)
    with DockerSandbox.start(base_image, limits=UNSET, config=policy, run_id="test-unset-limits") as sandbox:
        host = docker_client().api.inspect_container(sandbox.id)["HostConfig"]
        assert host["NanoCpus"] == 500_000_000 and host["Memory"] == 300 * 1024 * 1024
