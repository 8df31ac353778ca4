"""Performance fixes with a measured threshold."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
