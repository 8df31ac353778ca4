"""The ``ray`` backend's section of ``SandboxConfig`` (``sandbox.ray``), named by its registry line.

Imports nothing of the backend (nor Ray): every ``SandboxConfig`` is validated with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from terminal_agent.sandbox.config import SandboxConfig

__all__ = ["DEFAULT_HOST_RESOURCE", "RaySandboxConfig", "ray_settings"]

DEFAULT_HOST_RESOURCE = "terminal_agent_sandbox_host"


class RaySandboxConfig(BaseModel):
    """How the driver finds the sandbox hosts of a Ray cluster and how many sandboxes each may run."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    address: str | None = None
    """Cluster to join when this process has not called ``ray.init`` yet (``ray://...``, ``host:port``);
    None: ``auto`` (``RAY_ADDRESS``, else the cluster started on this machine by ``ray start``)."""
    host_resource: str = Field(DEFAULT_HOST_RESOURCE, min_length=1)
    """Custom resource a node advertises when it has a Docker daemon (``ray start --resources
    '{"terminal_agent_sandbox_host": 1}'``); each node's one SandboxHost actor claims 1 of it."""
    max_sandboxes_per_node: int = Field(50, ge=1)
    """Live sandboxes one node may carry; a start beyond every node's share is refused (SandboxUnavailableError)."""
    host_start_timeout_s: float = Field(120.0, gt=0)
    """How long a new SandboxHost actor may take to come up (Ray worker start, Docker ping, first sweep)."""
    call_grace_s: float = Field(30.0, gt=0)
    """Time granted to an actor call past the sandbox's own deadline before the host is declared lost."""
    refresh_interval_s: float = Field(30.0, gt=0)
    """How often the driver looks for nodes that joined (or hosts that died) when it starts a sandbox."""


def ray_settings(config: "SandboxConfig") -> RaySandboxConfig:
    """The ``sandbox.ray`` section of ``config``."""
    return config.backend_settings("ray", RaySandboxConfig)
