"""Git history to recover, inspect or rewrite."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
