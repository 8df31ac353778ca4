"""The sandbox backend registry: name -> backend, each starting sandboxes under the same contract.

>>> start_sandbox(SandboxConfig(backend="bwrap"), image_ref, TaskLimits(), run_id="r1")  # doctest: +SKIP

Every backend has the same two methods: ``resolve_task_image(config, task) -> image_ref`` (the
Docker backend builds or finds the task's image; bwrap looks it up in an export) and
``start(config, image_ref, limits, run_id, env, *, verifier_network=None) -> Sandbox`` (``env``: the
task's environment variables, templates already resolved by :func:`start_sandbox`; ``verifier_network``:
the network the verifier phase will ask for through ``Sandbox.set_network``, None: the agent's). Env, runner and launcher pick one with
``SandboxConfig.backend``; the grader needs nothing but the :class:`~terminal_agent.interfaces.Sandbox`
contract, so every backend is graded the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from terminal_agent.registry import Registry

if TYPE_CHECKING:
    from terminal_agent.interfaces import Sandbox
    from terminal_agent.sandbox.config import SandboxConfig
    from terminal_agent.tasks.model import Task, TaskLimits


class SandboxBackend(Protocol):
    """One way of running sandboxes."""

    def resolve_task_image(self, config: "SandboxConfig", task: "Task") -> str:
        """The image reference ``start`` takes for ``task``. Raises ``ImageError`` when it cannot be had."""
        ...

    def start(
        self, config: "SandboxConfig", image_ref: str, limits: "TaskLimits", run_id: str | None, env: dict[str, str],
        *, verifier_network: bool | None = None,
    ) -> "Sandbox":
        """A started sandbox whose persistent shell has ``env`` in its environment, with a network only when
        ``limits.network``, ready to switch to ``verifier_network`` later where the backend can.
        Raises ``SandboxUnavailableError`` when none can be started."""
        ...


SANDBOX_BACKENDS: Registry[SandboxBackend] = Registry("sandbox backend")


class DockerBackend:
    """Containers of the local Docker daemon, or of a remote one through ``DOCKER_HOST``."""

    def resolve_task_image(self, config: "SandboxConfig", task: "Task") -> str:
        from terminal_agent.sandbox.images.manager import ensure_task_image

        return ensure_task_image(task)

    def start(
        self, config: "SandboxConfig", image_ref: str, limits: "TaskLimits", run_id: str | None, env: dict[str, str],
        *, verifier_network: bool | None = None,
    ) -> "Sandbox":
        from terminal_agent.sandbox.docker.sandbox import DockerSandbox

        return DockerSandbox.start(image_ref, limits=limits, config=config, run_id=run_id, env=env,
                                   verifier_network=verifier_network)


class BwrapBackend:
    """bubblewrap sandboxes on an overlay of exported image layers; no daemon needed."""

    def resolve_task_image(self, config: "SandboxConfig", task: "Task") -> str:
        from terminal_agent.sandbox.images.export import ExportedImages

        return ExportedImages.open(config.bwrap.images_dir).image_for_task(task)

    def start(
        self, config: "SandboxConfig", image_ref: str, limits: "TaskLimits", run_id: str | None, env: dict[str, str],
        *, verifier_network: bool | None = None,
    ) -> "Sandbox":
        from terminal_agent.sandbox.bwrap.sandbox import BwrapSandbox

        return BwrapSandbox.start(image_ref, limits=limits, config=config, run_id=run_id, env=env,
                                  verifier_network=verifier_network)


SANDBOX_BACKENDS.register("docker")(DockerBackend())
SANDBOX_BACKENDS.register("bwrap")(BwrapBackend())


class _LazyRayBackend:
    """The Docker nodes of a Ray cluster (``sandbox/ray_backend.py``); Ray is imported on first use."""

    def resolve_task_image(self, config: "SandboxConfig", task: "Task") -> str:
        from terminal_agent.sandbox.ray.backend import RayBackend

        return RayBackend().resolve_task_image(config, task)

    def start(
        self, config: "SandboxConfig", image_ref: str, limits: "TaskLimits", run_id: str | None, env: dict[str, str],
        *, verifier_network: bool | None = None,
    ) -> "Sandbox":
        from terminal_agent.sandbox.ray.backend import RayBackend

        return RayBackend().start(config, image_ref, limits, run_id, env, verifier_network=verifier_network)


SANDBOX_BACKENDS.register("ray")(_LazyRayBackend())


def resolve_task_image(config: "SandboxConfig", task: "Task") -> str:
    """The image reference of ``task`` for the backend ``config.backend``."""
    return SANDBOX_BACKENDS.get(config.backend).resolve_task_image(config, task)


def start_sandbox(
    config: "SandboxConfig",
    image_ref: str,
    limits: "TaskLimits | None" = None,
    run_id: str | None = None,
    *,
    env: dict[str, str] | None = None,
    task_id: str | None = None,
    verifier_network: bool | None = None,
) -> "Sandbox":
    """Start a sandbox of ``image_ref`` with the backend ``config.backend`` (``docker`` unless set).

    ``verifier_network`` is the network the verifier phase will ask for (a task's
    ``verifier.verifier_network(limits.network)``; None: the same as the agent's): a Docker sandbox
    without network that will need one is started so that ``set_network(True)`` can connect it.

    ``env`` (a task's ``env``) becomes the environment of the sandbox's persistent shell; its
    ``${VAR}`` / ``${VAR:-default}`` templates are resolved here from this process's environment
    (``task_env``). Raises :class:`~terminal_agent.errors.ConfigError` naming the variable (and
    ``task_id``) when a template cannot be resolved, before anything starts.
    """
    from terminal_agent.sandbox.task_env import resolve_sandbox_env
    from terminal_agent.tasks.model import TaskLimits

    resolved = resolve_sandbox_env(env, task_id=task_id)
    backend = SANDBOX_BACKENDS.get(config.backend)
    return backend.start(config, image_ref, limits or TaskLimits(), run_id, resolved, verifier_network=verifier_network)
