"""Building and repairing C and Python projects (make, pip install, failing test suites)."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
