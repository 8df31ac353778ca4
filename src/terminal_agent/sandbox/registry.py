"""The one table of sandbox backends: name -> the object that runs them, one line per backend.

A built-in backend is named by where its entry lives, so this module imports no backend (and none of
the sandbox package): ``SandboxConfig`` checks a ``backend`` name here, every backend imports the
config, and no import comes back round. The entry's module is imported on the first
``SANDBOX_BACKENDS.get(name)``. A backend defined elsewhere (a plugin, a test) registers its object::

    SANDBOX_BACKENDS.register("local")(LocalBackend())

A backend with settings names their model (a light module of its own) as the ``settings`` companion of its
line, ``settings="package.module:Model"`` (or ``register("local", settings=LocalSettings)``): ``SandboxConfig``
then holds and validates the section ``sandbox.local`` without being edited (:mod:`terminal_agent.backend_settings`).

Every entry has the hooks of :class:`terminal_agent.sandbox.backends.SandboxBackend`; the rest of the
code reaches backends through :mod:`terminal_agent.sandbox.backends` and never names one.
"""

from __future__ import annotations

from typing import Any

from terminal_agent.registry import Registry

SANDBOX_BACKENDS: Registry[Any] = Registry("sandbox backend", companions=("settings",))
"""Name -> backend (a :class:`~terminal_agent.sandbox.backends.SandboxBackend`); a backend with settings names
their pydantic model as its ``settings`` companion: ``SandboxConfig`` holds them as the section ``NAME``."""

SANDBOX_BACKENDS.register_path("docker", "terminal_agent.sandbox.docker.backend:BACKEND")
SANDBOX_BACKENDS.register_path("bwrap", "terminal_agent.sandbox.bwrap.backend:BACKEND",
                               settings="terminal_agent.sandbox.bwrap.settings:BwrapConfig")
SANDBOX_BACKENDS.register_path("ray", "terminal_agent.sandbox.ray.backend:BACKEND",
                               settings="terminal_agent.sandbox.ray.settings:RaySandboxConfig")
