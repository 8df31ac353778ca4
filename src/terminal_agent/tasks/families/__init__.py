"""Procedural task families: seeded generators of easy and medium task instances.

See docs/task_families.md for the families, their splits and what their tests check.

One module per family; importing this package registers them all in :data:`FAMILIES`.
:func:`generate_instances` makes instances of one family for one split (the split of a family's
parameters is explicit: see :mod:`terminal_agent.tasks.families.base`).
"""

from terminal_agent.tasks.families import (  # noqa: F401 - each module registers its family
    archive_without,
    config_migrate,
    copy_named_file,
    count_file_lines,
    count_matches,
    csv_column_total,
    filter_status,
    fix_package_bug,
    git_recover,
    log_forensics,
    read_json_key,
    rename_extension,
    set_config_value,
    set_permissions,
    shell_script,
    sort_records,
    sqlite_query,
    sum_json_field,
    top_words,
)
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
