"""The one table of trainer backends: a preset's ``backend`` -> the object that runs it, one line per backend.

A built-in backend is named by where its entry lives, so this module imports no trainer (and nothing else of
the training package): the preset schema checks a ``backend`` name here, every backend imports the preset
schema and the launcher, and no import comes back round. The entry's module is imported on the first
``TRAINER_BACKENDS.get(name)``. A new backend is one module with a ``BACKEND`` object plus one line below::

    TRAINER_BACKENDS.register_path("mine", "terminal_agent.training.mine.backend:BACKEND")

Every entry has the flags and hooks of :class:`terminal_agent.training.trainer_backends.TrainerBackend`; the rest
of the code reaches backends through :func:`terminal_agent.training.trainer_backends.get_trainer_backend` and
never compares their names.
"""

from __future__ import annotations

from typing import Any

from terminal_agent.registry import Registry

TRAINER_BACKENDS: Registry[Any] = Registry("trainer backend")
"""Name -> backend (a :class:`~terminal_agent.training.trainer_backends.TrainerBackend`); the names are
``TrainingPreset.backend``'s values."""

TRAINER_BACKENDS.register_path("verl", "terminal_agent.training.verl.backend:BACKEND")
TRAINER_BACKENDS.register_path("local", "terminal_agent.training.local.backend:BACKEND")

__all__ = ["TRAINER_BACKENDS"]
