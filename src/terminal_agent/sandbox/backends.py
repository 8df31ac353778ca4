"""What every sandbox backend provides, and the calls the rest of the code makes through the registry.

>>> start_sandbox(SandboxConfig(backend="bwrap"), image_ref, TaskLimits(), run_id="r1")  # doctest: +SKIP

A backend is one object in :data:`~terminal_agent.sandbox.registry.SANDBOX_BACKENDS` with the hooks of
:class:`SandboxBackend`: ``resolve_task_image`` and ``start`` (the hot path), ``list_leaked`` and
``sweep_leaked`` (cleanup: the runner's and the launcher's sweeps, the cleanup daemon, ``terminal-agent
cleanup``), ``capacity`` (the launcher's check that a cluster can hold a run's episodes) and ``close``
(what this process still holds). Env, runner, pool, cleanup and launcher pick a
backend with ``SandboxConfig.backend`` or iterate the registry; none of them names one. The grader needs
nothing but the :class:`~terminal_agent.interfaces.Sandbox` contract, so every backend is graded the same way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from terminal_agent.sandbox.registry import SANDBOX_BACKENDS

if TYPE_CHECKING:
    from terminal_agent.interfaces import Sandbox
    from terminal_agent.sandbox.config import SandboxConfig
    from terminal_agent.tasks.model import Task, TaskLimits

__all__ = [
    "SANDBOX_BACKENDS", "LeakedObject", "SandboxBackend", "SandboxCapacity", "close_backends", "get_backend", "resolve_task_image",
    "start_sandbox",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeakedObject:
    """One object of a backend (a container, network, volume, a bwrap state dir ...) that cleanup would remove."""

    kind: str
    """What it is, in the backend's words: ``container``, ``network``, ``volume``, ``bwrap`` ..."""
    id: str
    name: str
    run_id: str
    """The ``run-id`` label of the run that made it."""
    reason: str
    """Why it is leaked (owner gone, TTL passed), from :func:`terminal_agent.sandbox.labels.judge`."""
    backend: str = ""
    """The registry name of the backend whose ``sweep_leaked`` removes it."""


@dataclass(frozen=True)
class SandboxCapacity:
    """How many sandboxes a backend spread over several hosts can hold at once."""

    total: int
    detail: str
    """Where the number comes from (``2 node(s) advertising 'x' x 50``)."""
    advice: str
    """How to get more."""


class SandboxBackend(Protocol):
    """One way of running sandboxes: the hooks every entry of the registry has."""

    def resolve_task_image(self, config: "SandboxConfig", task: "Task") -> str:
        """The image reference ``start`` takes for ``task``. Raises ``ImageError`` when it cannot be had."""
        ...

    def start(
        self, config: "SandboxConfig", image_ref: str, limits: "TaskLimits", run_id: str | None, env: dict[str, str],
        *, verifier_network: bool | None = None,
    ) -> "Sandbox":
        """A started sandbox whose persistent shell has ``env`` (resolved already) in its environment, with a
        network only when ``limits.network``, ready to switch to ``verifier_network`` later where the backend can.
        Raises ``SandboxUnavailableError`` when none can be started."""
        ...

    def list_leaked(self, config: "SandboxConfig", now: float | None = None) -> list[LeakedObject]:
        """This machine's objects of this backend whose owner is dead or whose TTL passed (only those carrying
        our labels or owner records; nothing is removed). Raises ``SandboxUnavailableError`` when the backend
        cannot be reached here (no daemon), so that cleanup can say what it did not check."""
        ...

    def sweep_leaked(
        self, config: "SandboxConfig", leaked: list[LeakedObject] | None = None, now: float | None = None
    ) -> list[LeakedObject]:
        """Remove ``leaked`` (objects this backend listed; None: what ``list_leaked`` finds now); those removed,
        one already gone counted. A removal that fails is logged and left out. Raises like ``list_leaked``."""
        ...

    def capacity(self, config: "SandboxConfig") -> SandboxCapacity | None:
        """The sandboxes the backend's hosts can hold at once, for the launcher to check against a run's parallel
        episodes; None for a backend bounded by this machine alone. Raises ``SandboxUnavailableError`` when its
        hosts cannot be reached."""
        ...

    # optional: ``wait_ready(config, timeout_s) -> bool`` blocks until sandboxes can be started again (a
    # daemon answering) and says whether they can; see :func:`wait_until_ready`.

    def close(self) -> None:
        """Close every sandbox this process still holds with this backend and free what they share (networks,
        host actors). Idempotent, never raises; each backend also runs it at a normal interpreter exit."""
        ...


def wait_until_ready(config: "SandboxConfig", timeout_s: float) -> bool:
    """Block until ``config.backend`` can start sandboxes again, at most ``timeout_s``; True when it can.

    The optional ``wait_ready(config, timeout_s)`` hook of a backend (the docker backend pings its daemon); a
    backend without one is always ready. The runner calls it before retrying a sandbox failure."""
    hook = getattr(get_backend(config.backend), "wait_ready", None)
    return True if hook is None else bool(hook(config, timeout_s))


def get_backend(name: str) -> SandboxBackend:
    """The backend registered as ``name``. Raises :class:`~terminal_agent.errors.ConfigError` listing the valid ones."""
    backend: SandboxBackend = SANDBOX_BACKENDS.get(name)  # the registry's entries are backends of this protocol
    return backend


def resolve_task_image(config: "SandboxConfig", task: "Task") -> str:
    """The image reference of ``task`` for the backend ``config.backend``."""
    return get_backend(config.backend).resolve_task_image(config, task)


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

    from terminal_agent.errors import StorageQuotaRefusedError
    from terminal_agent.sandbox.storage_quota import naming_task

    resolved = resolve_sandbox_env(env, task_id=task_id)
    backend = get_backend(config.backend)
    try:
        return backend.start(config, image_ref, limits or TaskLimits(), run_id, resolved,
                             verifier_network=verifier_network)
    except StorageQuotaRefusedError as exc:  # the backend cannot know the task: name it
        raise naming_task(exc, task_id) from None


def close_backends() -> None:
    """Run the ``close`` hook of every backend this process has used (a backend never loaded holds nothing)."""
    for name, backend in SANDBOX_BACKENDS.loaded().items():
        try:
            backend.close()
        except Exception:  # noqa: BLE001 - close hooks must not raise; one that does must not stop the others
            logger.warning("closing the %s sandbox backend failed", name, exc_info=True)
