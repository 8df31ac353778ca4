"""Typed settings of the sandboxes (backend, Docker, bwrap, ray), their warm pool and their cleanup daemon.

A backend with settings of its own keeps their model in its sub-package (``bwrap/settings.py``,
``ray/settings.py``: leaves that import nothing of the package) and has one section here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terminal_agent.sandbox.bwrap.settings import BwrapConfig
from terminal_agent.sandbox.ray.settings import RaySandboxConfig
from terminal_agent.sandbox.registry import SANDBOX_BACKENDS

__all__ = ["BwrapConfig", "RaySandboxConfig", "SandboxConfig"]


class SandboxConfig(BaseModel):
    """How sandboxes are started, how commands are bounded, and how leaks are cleaned."""

    model_config = ConfigDict(extra="forbid")

    backend: str = "docker"
    """Sandbox backend by name (``terminal_agent.sandbox.registry``): ``docker``, ``bwrap``, ``ray``, or one registered there."""
    bwrap: BwrapConfig = Field(default_factory=BwrapConfig)
    """Settings used when ``backend`` is ``bwrap``."""
    ray: RaySandboxConfig = Field(default_factory=RaySandboxConfig)
    """Settings used when ``backend`` is ``ray`` (sandboxes on the Docker nodes of a Ray cluster)."""

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
