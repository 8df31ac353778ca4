"""Small services to start and configure, with a health check."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
