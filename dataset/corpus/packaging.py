"""Packaging: wheels, entry points, versioned releases."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
