"""The ``bwrap`` backend's section of ``SandboxConfig`` (``sandbox.bwrap``), named by its registry line.

Imports nothing of the backend: every ``SandboxConfig`` is validated with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from terminal_agent.sandbox.config import SandboxConfig

__all__ = ["BwrapConfig", "bwrap_settings"]


class BwrapConfig(BaseModel):
    """Settings of the ``bwrap`` backend (bubblewrap sandboxes on hosts without a Docker daemon)."""

    model_config = ConfigDict(extra="forbid")

    images_dir: str | None = None
    """Directory written by ``terminal-agent images export``; None: ``$TERMINAL_AGENT_IMAGES_DIR``."""
    state_dir: str | None = None
    """Where sandboxes keep their overlay, owner record and extracted layers; None: ``$TERMINAL_AGENT_BWRAP_DIR``,
    else ``terminal-agent-bwrap`` in the system's temporary directory."""
    limits: Literal["auto", "cgroup", "rlimit"] = "auto"
    """``auto``: cgroup v2 (or v1) when writable, else rlimits; ``cgroup``: fail when no cgroup is writable;
    ``rlimit``: rlimits only (memory as address space; pids and cpu then unenforced, and recorded so)."""
    bwrap_path: str | None = None
    """The ``bwrap`` executable; None: found on PATH."""


def bwrap_settings(config: "SandboxConfig") -> BwrapConfig:
    """The ``sandbox.bwrap`` section of ``config``."""
    return config.backend_settings("bwrap", BwrapConfig)
