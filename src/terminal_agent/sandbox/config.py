"""Typed settings of the sandboxes (backend, Docker), their warm pool and their cleanup daemon.

A backend with settings of its own declares them in its package (``bwrap/settings.py``, ``ray/settings.py``) and
names them in its registry line; this config holds them as sections (``sandbox.bwrap``, ``sandbox.ray``) without
naming any (:mod:`terminal_agent.backend_settings`). Reading a config imports no backend (nor Docker or Ray): the
backend name is checked against the registry's table by name, and the sections' models are light modules.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator

from terminal_agent.backend_settings import BackendSettingsHost
from terminal_agent.registry import Registry
from terminal_agent.sandbox.registry import SANDBOX_BACKENDS
from terminal_agent.sandbox.storage_quota import StoragePolicy
from terminal_agent.tasks.model import TaskLimits

__all__ = ["SandboxConfig", "effective_limits"]


class SandboxConfig(BackendSettingsHost):
    """How sandboxes are started, how commands are bounded, and how leaks are cleaned.

    Besides these fields it holds one section per registered backend with settings (``bwrap``: bubblewrap
    sandboxes from an image export; ``ray``: sandboxes on the Docker nodes of a Ray cluster), each validated by
    the model its registry line names and read by the backend with ``backend_settings(name, Model)``."""

    model_config = ConfigDict(extra="allow")  # the backends' sections; any other unknown key is refused

    backend_registry: ClassVar[Registry[Any]] = SANDBOX_BACKENDS

    backend: str = "docker"
    """Sandbox backend by name (``terminal_agent.sandbox.registry``): ``docker``, ``bwrap``, ``ray``, or one registered there."""

    unset_cpus: float | None = Field(None, gt=0)
    """CPU quota given to a task that names none (``limits.cpus`` None: a Harbor task of schema 1.1+ without
    ``cpus``). None: no quota, as Harbor gives such a task."""
    unset_memory_mb: int | None = Field(None, gt=0)
    """Memory limit in MiB given to a task that names none (``limits.memory_mb`` None). None: no limit, as Harbor."""
    storage: StoragePolicy = "enforce"
    """A task's disk quota (``limits.storage_mb``; 10 GiB on every Terminal-Bench 2 task): ``enforce`` - a kernel
    quota where the backend has one (Docker ``storage_opt`` on overlay2 over xfs with pquota, btrfs, zfs,
    devicemapper), else the writable layer measured at each turn's end, and an episode over it ends as
    ``storage_limit`` (the agent's doing, graded); ``refuse`` - a kernel quota or the task is refused before it
    starts (not scored, the others go on); ``ignore`` - no quota, as Harbor 0.25's own Docker environment.
    docs/sandbox.md "Disk quota" says why ``enforce`` is the default."""
    storage_measure_share: float = Field(0.1, gt=0, le=1)
    """Most share of the wall clock a measured quota spends walking a sandbox's writable layer: after a walk of t
    seconds the next waits t / share (a turn ending sooner reuses the last figure)."""

    default_command_timeout_s: float = Field(60.0, gt=0)
    """Deadline of a command when the caller gives none and no task limits were given."""
    max_command_timeout_s: float = Field(600.0, gt=0)
    """Upper bound of any command's deadline, whatever the model asks for."""
    output_cap_bytes: int = Field(65536, ge=1024)
    """Bytes kept per stream of one command (half head, half tail); the middle is cut and counted."""
    ttl_s: float = Field(6 * 3600.0, gt=0)
    """Hard lifetime of a container: its shell server exits after it, and cleanup removes it."""
    start_timeout_s: float = Field(60.0, gt=0)
    """How long to wait for a new container's shell server to answer before giving up."""
    reply_grace_s: float = Field(15.0, gt=0)
    """Extra time past a command's deadline to wait for the server's reply before the sandbox is declared broken."""
    user: str | None = None
    """User the shell server runs as; None keeps the image's user."""
    ca: str | None = None
    """Extra CA certificates and proxy variables installed as a first layer under every task image, so builds,
    sandboxes and the episode's commands trust a TLS-intercepting proxy (``docs/images.md``): ``auto`` (the CAs
    this host trusts beyond its distribution's, and its proxy variables), ``none``, or a PEM file or directory of
    CA certificates. None: ``$TERMINAL_AGENT_CA_BUNDLE`` (``terminal-agent --ca-bundle``), else ``none``. Docker
    builds the images; the bwrap backend runs exports of them (``images export`` under the same setting)."""
    isolate_networks: bool = True
    """Docker: sandboxes with a network share one bridge network of this process with inter-container traffic
    off, so that rollouts cannot reach each other (a cold start costs ~100 ms more than on Docker's default
    bridge, measured here). False: Docker's default ``bridge``, where containers can reach each other."""
    docker_timeout_s: float = Field(120.0, gt=0)
    """Timeout of one Engine API call."""
    pool_size: int = Field(2, ge=0)
    """Warm containers kept ready per (image, limits) by SandboxPool."""
    max_concurrent_starts: int = Field(4, ge=1)
    """Containers being created at once across the pool (a gate against daemon overload)."""
    max_pool_images: int = Field(8, ge=1)
    """Distinct (image, limits) keys the pool keeps warm; the least recently used key is dropped beyond it."""
    cleanup_interval_s: float = Field(120.0, gt=0)
    """Period of the CleanupDaemon's sweep."""

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, name: str) -> str:
        if name not in SANDBOX_BACKENDS:  # checked by name: no backend is imported to read a config
            SANDBOX_BACKENDS.get(name)  # raises ConfigError listing the valid names
        return name


def effective_limits(limits: TaskLimits, config: SandboxConfig) -> TaskLimits:
    """``limits`` with a CPU quota or memory limit the task leaves unset (None) taken from the host policy
    (``config.unset_cpus`` / ``config.unset_memory_mb``; these may be None too: no limit, as Harbor)."""
    changes: dict[str, object] = {}
    if limits.cpus is None and config.unset_cpus is not None:
        changes["cpus"] = config.unset_cpus
    if limits.memory_mb is None and config.unset_memory_mb is not None:
        changes["memory_mb"] = config.unset_memory_mb
    return limits.model_copy(update=changes) if changes else limits
