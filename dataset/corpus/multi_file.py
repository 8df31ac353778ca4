"""Multi-step work across several files, binary fixtures included."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
