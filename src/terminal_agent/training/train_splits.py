"""Where the local trainer's tasks come from: a hash split of one task source, a separate held-out
source, a frozen splits file (``dataset/splits/splits.json``), or a ``backend: local`` preset's
``data`` section (which of those it names). The trainer, its held-out validation and the learning
experiment all take their splits from here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from terminal_agent.errors import ConfigError
from terminal_agent.tasks.model import Task

if TYPE_CHECKING:
    from terminal_agent.training.preset_config import TrainingPreset

DEFAULT_SHIPPED = Path("dataset") / "latest_verified.csv"


def load_train_tasks(source: str | Path, *, val_fraction: float, split_seed: int) -> tuple[list[Task], list[Task]]:
    """Train and held-out tasks of ``source`` (any task format ``load_tasks`` reads), split by id hash."""
    from terminal_agent.tasks.conversion import split_tasks
    from terminal_agent.tasks.loading import load_tasks

    tasks = load_tasks(source, strict=False)
    if not tasks:
        raise ConfigError(f"no usable task in {source}")
    if val_fraction <= 0 or len(tasks) < 2:
        return tasks, []
    return split_tasks(tasks, val_fraction, seed=split_seed)


def split_sources(tasks: str | Path, held_out: str | Path | None, *, val_fraction: float, split_seed: int) -> tuple[list[Task], list[Task]]:
    """Train and held-out tasks: a separate held-out source, or a hash split of ``tasks``."""
    if held_out is not None:
        from terminal_agent.tasks.loading import load_tasks

        train, test = load_tasks(tasks, strict=False), load_tasks(held_out, strict=False)
        overlap = {t.task_id for t in train} & {t.task_id for t in test}
        if overlap:
            raise ConfigError(f"held-out tasks also in the train source: {', '.join(sorted(overlap)[:5])}")
    else:
        train, test = load_train_tasks(tasks, val_fraction=val_fraction, split_seed=split_seed)
    if not train or not test:
        raise ConfigError(f"the experiment needs train and held-out tasks (got {len(train)} and {len(test)})")
    return train, test


def frozen_splits(splits_file: str | Path, shipped: str | Path = DEFAULT_SHIPPED) -> tuple[list[Task], list[Task]]:
    """The train and held-out tasks of a frozen splits file (``dataset/splits/splits.json``): shipped
    tasks looked up in ``shipped`` (hashes checked), family instances regenerated.

    When ``shipped`` has a validation manifest beside it (``validation_manifest.json``, as the shipped corpus
    does), its tasks are held to the no-work rule there: a task whose pinned validation is missing, stale or
    pays a no-op or empty-output agent is refused (ConfigError) before anything trains on it."""
    from terminal_agent.task_quality.no_work_rule import require_no_work_rule
    from terminal_agent.task_quality.splits import read_splits, resolve_split
    from terminal_agent.tasks.loading import load_tasks

    document = read_splits(Path(splits_file))
    tasks = load_tasks(shipped, strict=False)
    train, held_out = resolve_split(document, "train", tasks), resolve_split(document, "held_out", tasks)
    manifest = Path(shipped).parent / "validation_manifest.json"
    if manifest.is_file():
        require_no_work_rule([task for task in train + held_out if "family" not in task.metadata], manifest)
    return train, held_out


def local_task_split(preset: TrainingPreset) -> tuple[list[Task], list[Task]]:
    """The train and held-out tasks of a ``backend: local`` preset: ``data.splits`` (a frozen splits file,
    shipped tasks looked up in ``data.tasks``), else ``data.tasks`` split by ``data.val_fraction``."""
    data = preset.data
    if data.tasks is None:
        raise ConfigError("data.tasks: the local trainer reads a task source (CSV or task directory), not parquet")
    if data.splits is not None:
        return frozen_splits(data.splits, data.tasks)
    return load_train_tasks(data.tasks, val_fraction=data.val_fraction, split_seed=data.split_seed)


def exported_only(tasks: list[Task], images_dir: str | Path | None) -> list[Task]:
    """The tasks whose images the bwrap export at ``images_dir`` holds (its ``manifest.json``), in order.

    A partial export (the GPU node's, which carries a subset) then costs no step or evaluation its episodes.
    """
    import json

    if not images_dir:
        raise ConfigError("--only-exported needs sandbox.bwrap.images_dir or TERMINAL_AGENT_IMAGES_DIR")
    manifest = Path(images_dir) / "manifest.json"
    if not manifest.is_file():
        raise ConfigError(f"no manifest.json in the export {images_dir}")
    try:
        exported = set(json.loads(manifest.read_text())["tasks"])
    except (ValueError, KeyError, TypeError) as exc:  # a truncated or foreign manifest
        raise ConfigError(f"{manifest}: not an export manifest ({exc})") from None
    return [task for task in tasks if task.task_id in exported]


__all__ = ["DEFAULT_SHIPPED", "exported_only", "frozen_splits", "load_train_tasks", "local_task_split", "split_sources"]
