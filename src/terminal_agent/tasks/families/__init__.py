"""Procedural task families: seeded generators of easy and medium task instances.

See docs/task_families.md for the families, their splits and what their tests check.

One module per family, each registered by one line of :data:`FAMILIES` (``families/base.py``).
:func:`generate_instances` makes instances of one family for one split (the split of a family's
parameters is explicit: see :mod:`terminal_agent.tasks.families.base`).
"""

from terminal_agent.tasks.families.base import (
    DIFFICULTIES,
    FAMILIES,
    SPLITS,
    TaskFamily,
    family_parameter_space,
    generate_instances,
    get_family,
    held_out_families,
    split_of_key,
)

__all__ = [
    "DIFFICULTIES",
    "FAMILIES",
    "SPLITS",
    "TaskFamily",
    "family_parameter_space",
    "generate_instances",
    "get_family",
    "held_out_families",
    "split_of_key",
]
