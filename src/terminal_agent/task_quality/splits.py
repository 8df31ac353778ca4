"""Frozen train / held-out splits of the corpus and of the procedural families, as one JSON file.

The file (``dataset/splits/splits.json``) maps each split name to

* ``task_ids``: shipped tasks of the CSV, each with its content hashes (a changed task no longer
  matches its split and :func:`resolve_split` says so);
* ``families``: per family, the keys, seeds, count and difficulties from which
  :func:`~terminal_agent.tasks.families.generate_instances` regenerates the same instances.
  Held-out family instances draw only from the family's held-out keys, so they share no
  parameter with training instances.

The whole content carries a sha256 (``content_sha256``) over its canonical JSON, so a trainer can
record exactly which split it used. :func:`resolve_split` turns a split name into Task objects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.tasks.conversion import split_tasks
from terminal_agent.tasks.families import FAMILIES, family_parameter_space, generate_instances
from terminal_agent.tasks.model import Task

SPLITS_VERSION = 1


def canonical_sha256(data: Any) -> str:
    """sha256 of ``data`` as sorted, compact JSON (what ``content_sha256`` is computed over)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def freeze_splits(
    tasks: Sequence[Task],
    *,
    held_out_fraction: float = 0.2,
    seed: int = 0,
    family_count: int = 20,
    family_seeds: dict[str, int] | None = None,
    bands: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The splits document for ``tasks`` (split by a hash of seed and id) and every registered family.

    ``bands`` (screening results per task id) are recorded beside the splits when given.
    """
    train, held_out = split_tasks(list(tasks), held_out_fraction, seed=seed)
    family_seeds = family_seeds or {}
    splits: dict[str, Any] = {}
    for name, chosen in (("train", train), ("held_out", held_out)):
        families = {}
        for family in FAMILIES:
            space = family_parameter_space(family)
            families[family] = {
                "keys": space["train_keys"] if name == "train" else space["held_out_keys"],
                "seed": family_seeds.get(family, seed),
                "count": family_count if name == "train" else max(1, family_count // 4),
                "difficulties": space["difficulties"],
            }
        splits[name] = {
            "task_ids": {task.task_id: task.content_hashes() for task in chosen},
            "families": families,
        }
    document: dict[str, Any] = {
        "splits_version": SPLITS_VERSION,
        "held_out_fraction": held_out_fraction,
        "seed": seed,
        "splits": splits,
    }
    if bands is not None:
        document["bands"] = bands
    document["content_sha256"] = canonical_sha256({k: v for k, v in document.items() if k != "content_sha256"})
    return document


def write_splits(document: dict[str, Any], path: Path) -> Path:
    """Write the document (indented JSON, atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    temp.replace(path)
    return path


def read_splits(path: Path) -> dict[str, Any]:
    """Read a splits document; raises ConfigError when its content no longer matches its hash."""
    document = json.loads(Path(path).read_text())
    expected = canonical_sha256({k: v for k, v in document.items() if k != "content_sha256"})
    if document.get("content_sha256") != expected:
        raise ConfigError(f"{path}: content_sha256 does not match the content (the frozen split was edited)")
    return document


def resolve_split(document: dict[str, Any], split: str, tasks: Sequence[Task]) -> list[Task]:
    """The tasks of ``split``: shipped tasks found in ``tasks`` (hashes checked), then the family instances.

    Raises ConfigError naming every shipped task that is missing or changed since the split was frozen.
    """
    if split not in document["splits"]:
        raise ConfigError(f"unknown split {split!r}; valid: {', '.join(sorted(document['splits']))}")
    part = document["splits"][split]
    by_id = {task.task_id: task for task in tasks}
    problems = []
    chosen: list[Task] = []
    for task_id, hashes in part["task_ids"].items():
        task = by_id.get(task_id)
        if task is None:
            problems.append(f"{task_id}: missing")
        elif task.content_hashes() != hashes:
            changed = sorted(k for k, v in task.content_hashes().items() if hashes.get(k) != v)
            problems.append(f"{task_id}: changed {', '.join(changed)}")
        else:
            chosen.append(task)
    if problems:
        raise ConfigError(f"split {split!r} does not match the tasks: " + "; ".join(problems))
    for family, spec in part["families"].items():
        instances = generate_instances(family, spec["count"], spec["seed"], split=split, difficulties=spec["difficulties"])
        keys = {task.metadata["family_key"] for task in instances}
        if not keys <= set(spec["keys"]):
            raise ConfigError(f"family {family}: the registered keys of split {split!r} changed since the split was frozen")
        chosen.extend(instances)
    return chosen
