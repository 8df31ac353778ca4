"""The ``docker`` entry of the backend registry: its start, its leak sweep and its close.

Leaks: containers, networks and volumes carrying ``terminal-agent.managed=true`` whose owner is gone
or whose TTL passed (:func:`terminal_agent.sandbox.labels.judge`); objects without our label are never
listed, so they can never be removed. Containers are removed first so that networks and volumes free up.
"""

from __future__ import annotations

import logging

import docker
import docker.errors
import requests

from terminal_agent.errors import SandboxUnavailableError
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.interfaces import Sandbox
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.backends import LeakedObject
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker_connection import docker_client
from terminal_agent.tasks.model import Task, TaskLimits

logger = logging.getLogger(__name__)

NAME = "docker"
_KIND_ORDER = {"container": 0, "network": 1, "volume": 2}


def find_leaked_objects(api: docker.APIClient, now: float | None = None) -> list[LeakedObject]:
    """Our labelled containers, networks and volumes whose owner is dead or whose TTL passed (nothing is removed)."""
    leaked: list[LeakedObject] = []

    def judge(kind: str, object_id: str, name: str, labels: dict[str, str] | None) -> None:
        verdict = sandbox_labels.judge(labels or {}, now)
        if verdict.remove:
            run_id = (labels or {}).get(sandbox_labels.RUN_ID, "")
            leaked.append(LeakedObject(kind, object_id, name, run_id, verdict.reason, backend=NAME))

    for container in api.containers(all=True, filters=sandbox_labels.MANAGED_FILTER):
        judge("container", container["Id"], (container.get("Names") or [""])[0].lstrip("/"), container.get("Labels"))
    for network in api.networks(filters=sandbox_labels.MANAGED_FILTER):
        judge("network", network["Id"], network.get("Name", ""), network.get("Labels"))
    for volume in (api.volumes(filters=sandbox_labels.MANAGED_FILTER) or {}).get("Volumes") or []:
        judge("volume", volume["Name"], volume["Name"], volume.get("Labels"))
    return leaked


def remove_object(api: docker.APIClient, obj: LeakedObject) -> bool:
    """Remove one leaked object; False when it could not be removed (already gone counts as removed)."""
    try:
        if obj.kind == "container":
            api.remove_container(obj.id, force=True, v=True)
        elif obj.kind == "network":
            api.remove_network(obj.id)
        elif obj.kind == "volume":
            api.remove_volume(obj.id, force=True)
        else:
            raise ValueError(f"unknown kind {obj.kind!r}")
    except docker.errors.NotFound:
        return True
    except docker.errors.APIError as exc:
        if obj.kind == "container" and exc.status_code == 409:  # removal already in progress
            return True
        logger.warning("could not remove %s %s: %s", obj.kind, obj.id[:12], exc)
        return False
    return True


class DockerBackend:
    """Containers of the local Docker daemon, or of a remote one through ``DOCKER_HOST``."""

    def resolve_task_image(self, config: SandboxConfig, task: Task) -> str:
        from terminal_agent.sandbox.images.manager import ensure_task_image

        try:
            return ensure_task_image(task, ca=config.ca)
        except DAEMON_ERRORS as exc:  # the daemon went away while the image was looked up: a sandbox failure
            raise SandboxUnavailableError(f"the Docker daemon failed while the image of {task.task_id} was resolved: {exc}") from exc

    def start(
        self, config: SandboxConfig, image_ref: str, limits: TaskLimits, run_id: str | None, env: dict[str, str],
        *, verifier_network: bool | None = None,
    ) -> Sandbox:
        from terminal_agent.sandbox.docker.sandbox import DockerSandbox

        return DockerSandbox.start(image_ref, limits=limits, config=config, run_id=run_id, env=env,
                                   verifier_network=verifier_network)

    def list_leaked(self, config: SandboxConfig, now: float | None = None) -> list[LeakedObject]:
        try:
            return find_leaked_objects(docker_client(config.docker_timeout_s).api, now)
        except DAEMON_ERRORS as exc:
            raise SandboxUnavailableError(f"the Docker daemon failed while its leaks were listed: {exc}") from exc

    def sweep_leaked(
        self, config: SandboxConfig, leaked: list[LeakedObject] | None = None, now: float | None = None
    ) -> list[LeakedObject]:
        found = self.list_leaked(config, now) if leaked is None else leaked
        api = docker_client(config.docker_timeout_s).api
        ordered = sorted(found, key=lambda obj: _KIND_ORDER.get(obj.kind, 3))
        try:
            return [obj for obj in ordered if remove_object(api, obj)]
        except requests.RequestException as exc:  # the daemon went away during the sweep
            raise SandboxUnavailableError(f"the Docker daemon failed during the leak sweep: {exc}") from exc

    def capacity(self, config: SandboxConfig) -> None:
        return None  # this machine's own sandboxes: nothing to count

    def wait_ready(self, config: SandboxConfig, timeout_s: float) -> bool:
        """Ping the daemon until it answers (a restarting dockerd takes seconds), at most ``timeout_s``."""
        import time

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                docker_client(config.docker_timeout_s).ping()
                return True
            except DAEMON_ERRORS:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.5)

    def close(self) -> None:
        from terminal_agent.sandbox.docker.network import remove_own_networks
        from terminal_agent.sandbox.docker.sandbox import close_live_sandboxes

        close_live_sandboxes()
        remove_own_networks()


BACKEND = DockerBackend()
"""The object the registry's ``docker`` line names."""
