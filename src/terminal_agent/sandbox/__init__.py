"""Sandboxes: a persistent shell in an isolated machine, a warm pool and label-scoped cleanup.

The core (this package's modules: ``backends`` and ``registry``, ``config``, ``shell_protocol`` /
``shell_client``, ``pool``, ``cleanup``, ``labels``, ``task_env``, ``overlay_changes``, ``images/``) and
one sub-package per backend (``docker/``, ``bwrap/``, ``ray/``), each registered by one line of
``registry.py``. Names are imported lazily so that ``import terminal_agent.sandbox`` stays cheap and
does not pull in Docker or the image builder.
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
    "find_leaked": "terminal_agent.sandbox.cleanup",
    "LeakedObject": "terminal_agent.sandbox.backends",
    "SANDBOX_BACKENDS": "terminal_agent.sandbox.registry",
    "start_sandbox": "terminal_agent.sandbox.backends",
    "resolve_task_image": "terminal_agent.sandbox.backends",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'terminal_agent.sandbox' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
