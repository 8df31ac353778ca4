"""Shared fixtures and the layer probes.

Layers are opt-out by capability, not opt-in: a test marked ``docker`` runs whenever a daemon
answers. Locally a missing daemon skips with a reason; under CI (``CI=true``) it is an error,
because CI must run every layer the machine can run.
"""

from __future__ import annotations

import os

import pytest


def _docker_client():
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
        return client
    except Exception as exc:  # noqa: BLE001 - any failure means "no daemon"
        return exc


@pytest.fixture(scope="session")
def docker_client():
    client = _docker_client()
    if isinstance(client, Exception):
        message = f"no Docker daemon answers ({client}); run scripts/setup.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return client


def pytest_collection_modifyitems(config, items):
    # every test marked docker gets the probe, even if it does not ask for the fixture
    for item in items:
        if item.get_closest_marker("docker") and "docker_client" not in item.fixturenames:
            item.fixturenames.append("docker_client")
        if item.get_closest_marker("gpu"):
            try:
                import torch

                has_gpu = torch.cuda.is_available()
            except ImportError:
                has_gpu = False
            if not has_gpu:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU (run on the lent device)"))
