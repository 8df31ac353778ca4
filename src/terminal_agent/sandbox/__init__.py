"""Sandboxes: Docker containers with a persistent shell, a warm pool and label-scoped cleanup.

Submodules are imported lazily so that ``import terminal_agent.sandbox`` stays cheap and does
not pull in the image builder.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DockerSandbox": "terminal_agent.sandbox.docker.sandbox",
    "SandboxConfig": "terminal_agent.sandbox.config",
    "SandboxPool": "terminal_agent.sandbox.pool",
    "CleanupDaemon": "terminal_agent.sandbox.cleanup",
    "sweep_leaked": "terminal_agent.sandbox.cleanup",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'terminal_agent.sandbox' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
