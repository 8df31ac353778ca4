"""Frozen train / held-out splits of the corpus and of the procedural families, as one JSON file.

Held-out data tests generalisation, not template transfer, so nothing held out is a variant of anything trained on:

* ``train``: every shipped task not marked held out, and the instances of every family that is not held out,
  drawn from that family's train keys;
* ``held_out``: the hand-written tasks marked held out (``metadata["corpus_split"] == "held_out"``, set by
  ``Spec(held_out=True)`` in ``dataset/corpus``) and the instances of the *whole families* held out
  (``TaskFamily.held_out_family``: every key of theirs is held out, no instance of them is trained on);
* ``held_out_keys``: instances of the train families drawn from their held-out keys: the same templates with
  unseen parameters, kept apart so that template transfer is measured beside generalisation, never mixed in.

Per split the file records ``task_ids`` (each shipped task with its content hashes) and ``families`` (per family:
keys, seed, count, difficulties and ``instances``, the content hashes of every instance it regenerates to). A
changed task or a changed generator therefore no longer matches and :func:`resolve_split` refuses it: the splits
are refrozen on purpose (``python dataset/freeze_splits.py``), never silently.

Freezing checks what the split promises and refuses a split that breaks it (:class:`ConfigError`): no held-out
task or held-out family instance may be a near-twin of anything in ``train``
(:mod:`~terminal_agent.task_quality.similarity`; the closest pairs are recorded) or a skill twin (the same
distinctive tools and kind of output, :mod:`~terminal_agent.task_quality.skill_twins`), and when any hand-written
task is labelled hard, both splits must hold one (since the relabel of issue 36 none is: "hard" means
Terminal-Bench-2 hard, see docs/tasks.md). The document records the difficulty counts and which model screened the tasks (``screened_by``).
The whole content carries a sha256 (``content_sha256``) over its canonical JSON, so a trainer can record
exactly which split it used.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.task_quality.similarity import NEAR_TWIN, closest_pairs, near_twins
from terminal_agent.task_quality.skill_twins import SKILL_TWIN, skill_twins
from terminal_agent.tasks.families import FAMILIES, generate_instances, get_family
from terminal_agent.tasks.families.base import Split
from terminal_agent.tasks.model import Task

SPLITS_VERSION = 2
SPLIT_NAMES = ("train", "held_out", "held_out_keys")
HELD_OUT_MARK = "held_out"
"""``Task.metadata["corpus_split"]`` of a hand-written held-out task."""


def canonical_sha256(data: Any) -> str:
    """sha256 of ``data`` as sorted, compact JSON (what ``content_sha256`` is computed over)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def is_marked_held_out(task: Task) -> bool:
    """Whether a shipped task is a hand-written held-out task."""
    return task.metadata.get("corpus_split") == HELD_OUT_MARK


def is_held_out_family(name: str) -> bool:
    """Whether every key of family ``name`` is held out."""
    return get_family(name).held_out_family


def _family_entry(name: str, generate_split: Split, count: int, seed: int) -> tuple[dict[str, Any], list[Task]]:
    family = get_family(name)
    difficulties = list(family.difficulties)
    instances = generate_instances(name, count, seed, split=generate_split, difficulties=difficulties)
    entry = {
        "keys": family.split_keys(generate_split),
        "generated_from": generate_split,
        "seed": seed,
        "count": count,
        "difficulties": difficulties,
        "instances": {task.task_id: task.content_hashes() for task in instances},
    }
    return entry, instances


def _difficulties(tasks: Sequence[Task]) -> dict[str, int]:
    return dict(sorted(Counter(task.difficulty for task in tasks).items()))


def freeze_splits(
    tasks: Sequence[Task],
    *,
    seed: int = 0,
    family_count: int = 20,
    held_out_family_count: int = 10,
    family_seeds: dict[str, int] | None = None,
    bands: dict[str, Any] | None = None,
    near_twin: float = NEAR_TWIN,
) -> dict[str, Any]:
    """The splits document for the shipped ``tasks`` and every registered family (see the module docstring).

    ``bands`` (screening results per task id, with the screening ``model``) are recorded when given. Raises
    ConfigError when a held-out task is a near-twin of a training task or hard tasks sit in one split only.
    """
    family_seeds = family_seeds or {}
    held_tasks = [task for task in tasks if is_marked_held_out(task)]
    train_tasks = [task for task in tasks if not is_marked_held_out(task)]
    splits: dict[str, Any] = {name: {"task_ids": {}, "families": {}} for name in SPLIT_NAMES}
    splits["train"]["task_ids"] = {task.task_id: task.content_hashes() for task in train_tasks}
    splits["held_out"]["task_ids"] = {task.task_id: task.content_hashes() for task in held_tasks}
    members: dict[str, list[Task]] = {"train": list(train_tasks), "held_out": list(held_tasks), "held_out_keys": []}
    for family in FAMILIES:
        family_seed = family_seeds.get(family, seed)
        if is_held_out_family(family):
            entry, instances = _family_entry(family, "held_out", held_out_family_count, family_seed)
            splits["held_out"]["families"][family] = entry
            members["held_out"] += instances
            continue
        entry, instances = _family_entry(family, "train", family_count, family_seed)
        splits["train"]["families"][family] = entry
        members["train"] += instances
        if get_family(family).split_keys("held_out"):
            entry, instances = _family_entry(family, "held_out", max(1, family_count // 4), family_seed)
            splits["held_out_keys"]["families"][family] = entry
            members["held_out_keys"] += instances

    problems = []
    pairs = closest_pairs(members["held_out"], members["train"], top=0)
    twins = near_twins(pairs, near_twin)
    if twins:
        problems.append("held-out near-twins of training tasks (similarity >= "
                        f"{near_twin:g}): " + ", ".join(f"{p.held_out} ~ {p.train} {p.score:.2f}" for p in twins))
    same_skill = skill_twins(members["held_out"], members["train"])
    if same_skill:
        problems.append(f"held-out skill twins of training tasks (shared tools >= {SKILL_TWIN:g}, same kind of "
                        "output): " + ", ".join(f"{t.held_out} ~ {t.train} ({', '.join(t.shared_tools)})"
                                                for t in same_skill))
    if any(task.difficulty == "hard" for task in tasks):  # none since the honest relabel of issue 36
        for name, shipped in (("train", train_tasks), ("held_out", held_tasks)):
            if not any(task.difficulty == "hard" for task in shipped):
                problems.append(f"split {name!r} holds no hard hand-written task")
    if problems:
        raise ConfigError("the splits break their rules: " + "; ".join(problems))

    document: dict[str, Any] = {
        "splits_version": SPLITS_VERSION,
        "seed": seed,
        "held_out_rule": "hand-written tasks marked held out, and whole held-out families",
        "splits": splits,
        "difficulty": {
            name: {"shipped": _difficulties([t for t in members[name] if "family" not in t.metadata]),
                   "family_instances": _difficulties([t for t in members[name] if "family" in t.metadata])}
            for name in SPLIT_NAMES
        },
        "near_twin_check": {
            "measure": "mean TF-IDF cosine over prompt, files and solution (terminal_agent.task_quality.similarity)",
            "threshold": near_twin,
            "held_out_vs": "train",
            "closest": [pair.to_dict() for pair in pairs[:15]],
        },
        "skill_twin_check": {
            "measure": "IDF-weighted share of the held-out task's distinctive tools that a training task with the same "
                       "kind of output uses (terminal_agent.task_quality.skill_twins)",
            "threshold": SKILL_TWIN,
            "twins": [],
        },
        "screened_by": bands.get("model") if bands else None,
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
    """Read a splits document; raises ConfigError when its content no longer matches its hash or it is of an
    older layout."""
    try:
        document = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable splits file: {exc}") from None
    except RecursionError:  # json recurses per level of nesting
        raise ConfigError(f"{path}: not a readable splits file: JSON nested too deeply") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: a splits file holds a JSON object")
    expected = canonical_sha256({k: v for k, v in document.items() if k != "content_sha256"})
    if document.get("content_sha256") != expected:
        raise ConfigError(f"{path}: content_sha256 does not match the content (the frozen split was edited)")
    if document.get("splits_version") != SPLITS_VERSION:
        raise ConfigError(f"{path}: splits_version {document.get('splits_version')!r}, this version reads "
                          f"{SPLITS_VERSION}: refreeze with python dataset/freeze_splits.py")
    return document


def resolve_split(document: dict[str, Any], split: str, tasks: Sequence[Task]) -> list[Task]:
    """The tasks of ``split``: shipped tasks found in ``tasks`` (hashes checked), then the family instances
    (regenerated, ids and hashes checked against the pinned ones).

    Raises ConfigError naming every shipped task that is missing or changed, and every family whose instances
    changed since the split was frozen.
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
    for family, spec in part["families"].items():
        if family not in FAMILIES:
            problems.append(f"family {family}: not registered")
            continue
        instances = generate_instances(family, spec["count"], spec["seed"], split=spec["generated_from"],
                                       difficulties=spec["difficulties"])
        now = {task.task_id: task.content_hashes() for task in instances}
        if now != spec["instances"]:
            differ = sorted(set(now) ^ set(spec["instances"])) + sorted(
                task_id for task_id in set(now) & set(spec["instances"]) if now[task_id] != spec["instances"][task_id])
            problems.append(f"family {family}: {len(differ)} instance(s) changed since the split was frozen "
                            f"({', '.join(differ[:3])}{' ...' if len(differ) > 3 else ''}; a generator change: "
                            "refreeze with python dataset/freeze_splits.py)")
            continue
        chosen.extend(instances)
    if problems:
        raise ConfigError(f"split {split!r} does not match the tasks: " + "; ".join(problems))
    return chosen
