"""The four original sample tasks, rewritten as sources (they replace their hand-kept CSV rows)."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
