"""The tasks of a verl run and the parquet files verl reads them from.

:func:`verl_task_split` chooses the run's train and validation tasks (``data.splits``, or ``data.tasks`` split by
``data.val_fraction``; then ``data.task_ids`` and ``data.only_exported``); :func:`write_parquet_files` converts
them with our converter into the train/val parquet the launch plan names, after refusing a run whose epochs end
before ``trainer.total_training_steps``. A preset with ``data.train_files`` is used as it is.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.training.launch_environment import exported_images_dir
from terminal_agent.training.launch_plan import LaunchPlan
from terminal_agent.training.verl.preset_sections import VerlPreset, verl_preset
from terminal_agent.training.verl.verl_plan import VerlPlan

logger = logging.getLogger(__name__)


def check_verl_data_paths(preset: VerlPreset) -> None:
    """verl's own data keys: the ready parquet files exist, ``data.task_ids`` keeps a task, ``data.only_exported``
    has an export to read (the launcher checks ``data.tasks`` and ``data.splits``)."""
    data = preset.data
    for key, value in (("data.train_files", data.train_files), ("data.val_files", data.val_files)):
        if value is not None and not Path(value).expanduser().is_file():
            raise ConfigError(f"{key}: {value} is not a file")
    if data.task_ids is not None and not data.task_ids:
        raise ConfigError("data.task_ids: an empty list keeps no task (null keeps all)")
    if data.only_exported:
        images_dir = exported_images_dir(preset)
        if not images_dir:
            raise ConfigError("data.only_exported: needs sandbox.env.sandbox.bwrap.images_dir (or "
                              "TERMINAL_AGENT_IMAGES_DIR): the export whose manifest.json lists the tasks")
        if not (Path(images_dir).expanduser() / "manifest.json").is_file():
            raise ConfigError(f"data.only_exported: no manifest.json in the export {images_dir}")


def verl_task_split(preset: VerlPreset) -> tuple[list[Any], list[Any]]:
    """The train and validation tasks of a verl run: ``data.splits`` (the frozen file's train and held-out
    splits, shipped tasks looked up in ``data.tasks``, family instances regenerated) or ``data.tasks`` split by
    ``data.val_fraction``; then only ``data.task_ids`` and, with ``data.only_exported``, the tasks the bwrap
    export holds. Raises ConfigError when no train task is left."""
    data = preset.data
    if data.tasks is None:  # DataSection's validator: data.tasks is set whenever data.train_files is not
        raise ConfigError("data.tasks: not set (the tasks of a verl run come from data.tasks; data.train_files is "
                          "used as it is)")
    if data.splits is not None:
        from terminal_agent.training.train_splits import frozen_splits

        train, val = frozen_splits(data.splits, data.tasks)
    else:
        from terminal_agent.tasks.conversion import split_tasks
        from terminal_agent.tasks.loading import collect_tasks

        tasks, errors = collect_tasks(data.tasks)
        for error in errors:
            logger.warning("task skipped: %s", error)
        if not tasks:
            raise ConfigError(f"data.tasks: {data.tasks} holds no valid task")
        train, val = split_tasks(tasks, data.val_fraction, seed=data.split_seed)
    if data.task_ids is not None:
        wanted = set(data.task_ids)
        unknown = wanted - {task.task_id for task in train + val}
        if unknown:
            raise ConfigError(f"data.task_ids: not among the tasks of data.tasks: {', '.join(sorted(unknown)[:5])}")
        train, val = [t for t in train if t.task_id in wanted], [t for t in val if t.task_id in wanted]
    if data.only_exported:
        from terminal_agent.training.train_splits import exported_only

        images_dir = exported_images_dir(preset)
        train, val = exported_only(train, images_dir), exported_only(val, images_dir)
    if not train:
        raise ConfigError("data: no train task left (check data.task_ids and data.only_exported)")
    return train, val


def _check_epochs_cover_steps(preset: VerlPreset, train_tasks: int) -> None:
    """rLLM's trainer stops after ``trainer.total_epochs`` passes even before ``total_training_steps``: refuse
    a run that would end early (verl drops the last incomplete batch of an epoch)."""
    steps = preset.trainer.total_training_steps
    per_epoch = train_tasks // preset.batch.train_batch_size
    if per_epoch == 0:
        raise ConfigError(f"batch.train_batch_size: {preset.batch.train_batch_size} tasks per step, but only "
                          f"{train_tasks} train task(s)")
    if steps is not None and per_epoch * preset.trainer.total_epochs < steps - 1:
        raise ConfigError(f"trainer.total_epochs: {preset.trainer.total_epochs} epoch(s) of {per_epoch} step(s) "
                          f"({train_tasks} train tasks / {preset.batch.train_batch_size}) end before "
                          f"trainer.total_training_steps {steps} (rLLM trains {steps - 1}); raise total_epochs")


def write_parquet_files(plan: LaunchPlan[VerlPlan]) -> None:
    """Convert the run's tasks (:func:`verl_task_split`) into its train/val parquet with our converter.

    When no validation task is left, the validation file holds the train tasks (verl needs one) and a
    note says so; ``trainer.test_freq=-1 trainer.val_before_train=false`` then skip validation except
    the final pass rLLM's trainer always runs."""
    preset = verl_preset(plan.preset)
    if preset.data.train_files is not None:
        return
    from terminal_agent.tasks.parquet.rows import write_parquet

    files = plan.backend_part()
    train, val = verl_task_split(preset)
    _check_epochs_cover_steps(preset, len(train))
    write_parquet(train, files.train_files, split="train")
    if files.val_files is not None:
        if not val:
            logger.warning("no validation task left: %s holds the train tasks", files.val_files)
        write_parquet(val or train, files.val_files, split="test")
    logger.info("wrote %d train / %d validation task(s) to %s", len(train), len(val), Path(files.train_files).parent)


__all__ = ["verl_task_split", "write_parquet_files"]
