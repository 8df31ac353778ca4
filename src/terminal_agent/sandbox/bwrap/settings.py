"""Typed settings of the ``bwrap`` backend: its section ``bwrap`` of ``SandboxConfig``.

A leaf (pydantic only), so that reading a config imports nothing of the backend.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


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
