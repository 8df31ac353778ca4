"""Log forensics across several sources."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
