"""SQLite databases: queries, migrations, repairs."""

from __future__ import annotations

from _spec import Spec

TASKS: list[Spec] = []
