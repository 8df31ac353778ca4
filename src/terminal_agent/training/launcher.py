"""Resolve, validate, show and launch a training preset.

    preset_keys, raw = split_overrides(["rollout.n=16", "actor_rollout_ref.rollout.enforce_eager=true"])
    plan = plan_launch(load_preset("prod_32b_8_gpus", preset_keys), raw_overrides=raw)   # validates everything
    write_dry_run(plan)                                                    # redacted, saved in the run dir
    launch(plan)                                                           # the real run

:func:`plan_launch` is everything that can be checked without GPUs: the typed preset, the
geometry rules, our env/agent arguments against their own configs, level 1 (every rLLM/verl key
composed with Hydra against the real YAML, the command line's raw hydra keys after them) and, where
verl imports, level 2 (verl's ``validate_config``). It resolves what the preset leaves to the machine:
``sandbox.backend: auto`` (docker where a daemon answers, else bwrap) and ``model.path: embedded``
(the packaged model's converted directory, on the verl path). A failure is a :class:`ConfigError`
naming the key, or a :class:`TrainingSetupError` naming what to install; nothing has been started then.

For ``backend: local`` the plan holds the local trainer's config, built by
:meth:`LocalTrainingConfig.from_preset` (the function the launch itself calls), so a dry run
refuses what the launch would: a value the local trainer cannot run, or a verl-only key it would
ignore, each named by its preset key.

:func:`launch` for ``backend: verl`` checks the machine (packages, GPUs, Ray nodes, wandb), sweeps
leaked sandboxes and keeps the cleanup daemon running, writes the parquet files with our
converter, and hands our Workflow class to rLLM's ``AgentTrainer`` through its Python API, with a
Ray ``runtime_env`` that ships this package to every worker. rLLM is used as installed, never
patched. For ``backend: local`` it calls the local trainer.

``launch(plan, rehearse=True)`` runs that same verl launch on a machine without GPUs (or vLLM):
the vLLM and GPU checks become log lines, Ray is started with ``cluster.gpus_per_node`` GPUs it
does not have, and the run goes as far as it can (Ray, verl's validation, the parquet, the
trainer's workers) until the first call that needs a GPU or vLLM fails. CI drives it so.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from terminal_agent.errors import ConfigError, TrainingSetupError
from terminal_agent.training.geometry_checks import SandboxPlacement, placement_plan, require_sound_geometry
from terminal_agent.training.launch_environment import (
    exported_images_dir,
    forwarded_environment,
    load_object,
    run_environment,
)
from terminal_agent.training.launch_plan import LaunchPlan
from terminal_agent.training.preset_config import TrainingPreset
from terminal_agent.training.redaction import redact, redact_mapping
from terminal_agent.training.trainer_backends import get_trainer_backend
from terminal_agent.training.verl.machine_checks import (
    check_local_gpus,
    check_packages,
    check_ray_cluster,
    check_sandbox_slots,
    check_wandb,
    ray_init_arguments,
)
from terminal_agent.training.verl.overrides import HydraOverride, RawOverride, verl_overrides, workflow_args_for

if TYPE_CHECKING:  # hydra-core and the watchdog are imported where a verl plan or launch needs them
    from omegaconf import DictConfig

    from terminal_agent.training.verl.stall_watchdog import StallWatchdog

logger = logging.getLogger(__name__)

#: Where our Workflow for rLLM HEAD lives (written with the env conformance work).
WORKFLOW_CLASS_PATH = "terminal_agent.training.verl.rllm_workflow:TerminalTaskWorkflow"
LOCAL_TRAINER_PATH = "terminal_agent.training.local.trainer:run_local_training"
#: NVLink multicast (NVLS) off in every process of a verl launch (issue 39): NCCL's NVLS all-reduce, torch's
#: symmetric-memory multicast and NVSHMEM's NVLS. Set in the launcher's own environment and in every Ray
#: worker's; a launch whose environment turns one on is refused.
NVLINK_MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
#: The values of each variable that keep multicast off (compared case-insensitively, spaces stripped).
_MULTICAST_OFF_VALUES = {"NCCL_NVLS_ENABLE": {"0"},
                         "TORCH_SYMM_MEM_DISABLE_MULTICAST": {"1", "true", "yes", "on"},
                         "NVSHMEM_DISABLE_NVLS": {"1", "true", "yes", "y", "on"}}


# --- validation ----------------------------------------------------------------------------------
def check_no_compaction(preset: TrainingPreset) -> None:
    """The verl backend's agent check (its hook ``check_launch``)."""
    if preset.agent.compaction:
        raise ConfigError("agent.compaction: must be false for verl: compaction rewrites earlier turns, and rLLM's "
                          "token mode then sets every response mask to 0 (the run would train on nothing)")


AUTO_SANDBOX = "auto"


def docker_daemon_answers() -> bool:
    """Whether a Docker daemon answers here (a ping, a few seconds at most)."""
    try:
        from terminal_agent.sandbox.docker_connection import docker_client
    except ImportError:  # the docker package is missing: no daemon can be used either
        return False
    from terminal_agent.errors import DockerNotAvailableError

    try:
        docker_client(5.0)
    except DockerNotAvailableError:
        return False
    return True


def resolve_sandbox_backend(preset: TrainingPreset, notes: list[str]) -> TrainingPreset:
    """``preset`` with ``sandbox.backend: auto`` resolved: docker where a daemon answers, else bwrap (a copy;
    any other backend: ``preset`` itself)."""
    if preset.sandbox.backend != AUTO_SANDBOX:
        return preset
    chosen = "docker" if docker_daemon_answers() else "bwrap"
    resolved = preset.model_copy(deep=True)
    resolved.sandbox.backend = chosen
    resolved._source, resolved._command_line = preset._source, preset._command_line
    notes.append(f"sandbox.backend auto -> {chosen} ({'a Docker daemon answers' if chosen == 'docker' else 'no Docker daemon answers here'})")
    return resolved


def resolve_model_path(preset: TrainingPreset) -> str:
    """The directory or hub id verl loads: ``model.path``, or for ``embedded`` the packaged model's converted
    transformers directory (converted once into the cache)."""
    if preset.model.path != "embedded":
        return preset.model.path
    from terminal_agent.models.embedded import ensure_embedded_model_cached

    try:
        return str(ensure_embedded_model_cached())
    except ImportError as exc:
        raise TrainingSetupError(f"model.path embedded: the conversion needs {exc.name!r} "
                                 "(pip install -e '.[model]')") from None


def _check_ambiguous_keys(preset: TrainingPreset, overrides: list[HydraOverride]) -> None:
    """A preset key of the command line whose path rLLM/verl's config has too must map onto that very key with
    the same value; otherwise the user cannot know which one they set."""
    from terminal_agent.training.verl.schema import base_trainer_schema, schema_has_key

    schema = base_trainer_schema()
    for key in preset.command_line_keys:
        if not schema_has_key(schema, key):
            continue
        mapped = [o for o in overrides if o.source == key]
        value = preset
        for part in key.split("."):
            value = getattr(value, part) if not isinstance(value, dict) else value[part]
        if not any(o.key == key and o.value == value for o in mapped):
            targets = ", ".join(o.key for o in mapped) or "no rLLM/verl key"
            raise ConfigError(f"{key}: ambiguous: a preset key (mapped to {targets}) and a different rLLM/verl key of "
                              "the same name; set the preset key in a preset file, or the rLLM/verl key as "
                              f"++{key}=VALUE")


#: Preset keys only the verl path reads, each with why (a local preset must leave them at their defaults).
VERL_PATH_KEYS = {
    "model.attn_implementation": "the local trainer loads the model with transformers' default attention",
    "model.use_remove_padding": "verl's padding-free forward; the local trainer has its own",
    "rollout.enforce_eager": "a vLLM setting; the local sampler is not vLLM",
    "data.task_ids": "the local trainer's scripts choose tasks with --only-exported / --limit-train",
    "data.seed": "the local trainer's task order is seeded by local.seed",
    "data.only_exported": "the local trainer's scripts take --only-exported",
    "runtime_env.env_vars": "Ray workers' environment; the local trainer runs no Ray (set variables in the shell)",
    "trainer.stall_timeout_s": "a watchdog of the verl run's metrics file; the local trainer fails in its own process",
}


def check_no_verl_path_keys(preset: TrainingPreset) -> None:
    """Refuse a verl-path key set away from its default (the hook ``check_launch`` of a backend that is not verl)."""
    for key, why in VERL_PATH_KEYS.items():
        section_key, _, name = key.rpartition(".")
        section = getattr(preset, section_key)
        default = type(section).model_fields[name].get_default(call_default_factory=True)
        if getattr(section, name) != default:
            raise ConfigError(f"{key}: verl path only ({why}); leave it out or at its default {default!r} for "
                              f"backend {preset.backend}")


def _check_sandbox_backend(preset: TrainingPreset) -> None:
    from terminal_agent.sandbox.backends import SANDBOX_BACKENDS

    if preset.sandbox.backend not in SANDBOX_BACKENDS:
        raise ConfigError(f"sandbox.backend: {preset.sandbox.backend!r} is not a sandbox backend of this version "
                          f"(valid: {', '.join(SANDBOX_BACKENDS.names())})")


def _check_env_and_agent_args(workflow_args: dict[str, Any]) -> None:
    """Build the env and the agent from the arguments exactly as the Workflow will (nothing is started)."""
    from pydantic import ValidationError

    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.env import DockerIsolatedEnv

    def first_error(exc: ValidationError) -> str:
        first = exc.errors()[0]
        return f"{'.'.join(map(str, first.get('loc', ())))!r}: {first.get('msg')}"

    try:
        DockerIsolatedEnv(**workflow_args["env_args"])
    except ValidationError as exc:
        raise ConfigError(f"sandbox.env / reward: env setting {first_error(exc)}") from None
    except ConfigError as exc:
        raise ConfigError(f"sandbox.env: {exc}") from None
    agent_config = {**workflow_args["agent_args"], "training": True, "compaction": workflow_args["compaction"]}
    try:
        TerminalBenchAgent(agent_config)
    except ValidationError as exc:
        raise ConfigError(f"agent: agent setting {first_error(exc)}") from None


def _check_data_paths(preset: TrainingPreset) -> None:
    data = preset.data
    for key, value in (("data.train_files", data.train_files), ("data.val_files", data.val_files)):
        if value is not None and not Path(value).expanduser().is_file():
            raise ConfigError(f"{key}: {value} is not a file")
    if data.train_files is None and data.tasks is not None and not Path(data.tasks).expanduser().exists():
        raise ConfigError(f"data.tasks: {data.tasks} does not exist (a CSV, a task directory or a directory of them)")
    if data.task_ids is not None and not data.task_ids:
        raise ConfigError("data.task_ids: an empty list keeps no task (null keeps all)")
    if data.only_exported:
        images_dir = exported_images_dir(preset)
        if not images_dir:
            raise ConfigError("data.only_exported: needs sandbox.env.sandbox.bwrap.images_dir (or "
                              "TERMINAL_AGENT_IMAGES_DIR): the export whose manifest.json lists the tasks")
        if not (Path(images_dir).expanduser() / "manifest.json").is_file():
            raise ConfigError(f"data.only_exported: no manifest.json in the export {images_dir}")
    if data.splits is not None:
        from terminal_agent.task_quality.splits import read_splits

        path = Path(data.splits).expanduser()
        if not path.is_file():
            raise ConfigError(f"data.splits: {data.splits} is not a file (a frozen splits file such as "
                              "dataset/splits/splits.json)")
        try:
            read_splits(path)
        except ConfigError as exc:
            raise ConfigError(f"data.splits: {exc}") from None


def effective_workflow_args(workflow_args: dict[str, Any], trainer_config: DictConfig) -> dict[str, Any]:
    """What rLLM's TaskRunner passes to the Workflow: ours with ``rllm.workflow.workflow_args`` laid over.

    (rLLM copies every non-null value of that config section over the arguments it was given,
    updating nested mappings.)
    """
    from terminal_agent.training.verl.schema import config_dict

    effective = {key: (dict(value) if isinstance(value, dict) else value) for key, value in workflow_args.items()}
    section = config_dict(trainer_config.rllm.workflow.workflow_args, resolve=True, what="rllm.workflow.workflow_args")
    for key, value in section.items():
        if value is None:
            continue
        if isinstance(effective.get(key), dict):
            effective[key].update(value)
        else:
            effective[key] = value
    return effective


def _check_workflow_signature(workflow_args: dict[str, Any], notes: list[str]) -> None:
    """Bind the Workflow's arguments to its __init__ when the class imports here."""
    try:
        workflow_class = load_object(WORKFLOW_CLASS_PATH, "the rLLM Workflow")
    except TrainingSetupError as exc:
        notes.append(f"workflow arguments not checked against the Workflow's signature: {exc}")
        return
    try:
        inspect.signature(workflow_class).bind(rollout_engine=None, executor=None, **workflow_args)
    except TypeError as exc:
        raise ConfigError(f"agent / sandbox: the Workflow does not take these arguments: {exc}") from None


def require_multicast_off(preset: TrainingPreset, environ: dict[str, str] | None = None) -> None:
    """Refuse a verl launch whose environment (``environ``, default this process's) or whose preset's
    ``runtime_env.env_vars`` sets one of :data:`NVLINK_MULTICAST_OFF` to a value that turns multicast on.
    Raises ConfigError naming the variable and its value; unset variables are fine (the launch sets them)."""
    environ = dict(os.environ) if environ is None else environ
    sources = [(f"runtime_env.env_vars.{name}", name, preset.runtime_env.env_vars.get(name), "in the preset")
               for name in NVLINK_MULTICAST_OFF]
    sources += [(name, name, environ.get(name), "in the environment") for name in NVLINK_MULTICAST_OFF]
    for key, name, value, where in sources:
        if value is not None and value.strip().lower() not in _MULTICAST_OFF_VALUES[name]:
            off = NVLINK_MULTICAST_OFF[name]
            raise ConfigError(f"{key}={value!r} ({where}) turns NVLink multicast on; a verl launch keeps it off in "
                              f"every process: unset {name} or set {name}={off}")


def plan_launch(preset: TrainingPreset, *, raw_overrides: list[RawOverride] | tuple[RawOverride, ...] = (),
                level2: bool = True, verl_python: str | None = None) -> LaunchPlan:
    """Validate ``preset`` and the command line's raw rLLM/verl keys completely (nothing is started).
    Raises ConfigError / TrainingSetupError."""
    notes: list[str] = []
    backend = get_trainer_backend(preset.backend)
    backend.check_launch(preset, raw_overrides)
    preset = resolve_sandbox_backend(preset, notes)
    plan = LaunchPlan(preset=preset, run_dir=preset.run_dir, raw_overrides=list(raw_overrides), notes=notes)
    _check_sandbox_backend(preset)
    require_sound_geometry(preset)
    _check_data_paths(preset)
    plan.workflow_args = workflow_args_for(preset)
    _check_env_and_agent_args(plan.workflow_args)
    return backend.plan(plan, level2=level2, verl_python=verl_python)


def plan_verl(plan: LaunchPlan, *, level2: bool = True, verl_python: str | None = None) -> LaunchPlan:
    """The verl backend's part of :func:`plan_launch`: data files, model path, hydra keys composed with Hydra,
    the Workflow's signature and level 2."""
    preset = plan.preset
    require_multicast_off(preset)
    from terminal_agent.training.verl.schema import compose_trainer_config, validate_with_verl

    data_dir = plan.run_dir / "data"
    plan.train_files = preset.data.train_files or str(data_dir / "train.parquet")
    if preset.data.train_files is not None:
        plan.val_files = preset.data.val_files
    elif preset.data.val_fraction > 0:
        plan.val_files = str(data_dir / "val.parquet")
    plan.model_path = resolve_model_path(preset)
    plan.hydra_overrides = verl_overrides(preset, train_files=plan.train_files, val_files=plan.val_files,
                                          model_path=plan.model_path)
    _check_ambiguous_keys(preset, plan.hydra_overrides)
    plan.trainer_config = compose_trainer_config(plan.hydra_overrides, plan.raw_overrides)
    _check_workflow_signature(effective_workflow_args(plan.workflow_args, plan.trainer_config), plan.notes)
    if level2:
        plan.level2 = validate_with_verl(plan.trainer_config, python=verl_python)
        if not plan.level2.ran:
            plan.notes.append(f"level 2 (verl validate_config) not run: {plan.level2.reason}")
        plan.notes.extend(plan.level2.notes)
    return plan


def ray_runtime_env(preset: TrainingPreset, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ray ``runtime_env`` of the run: rLLM's (``base``, merged, not replaced) plus our package, forwarded
    variables and :func:`run_environment` last (the preset's ``runtime_env.env_vars``, then the NVLink multicast
    switches: they win over rLLM's and the shell's)."""
    import terminal_agent

    runtime_env = {key: (dict(value) if isinstance(value, dict) else value) for key, value in (base or {}).items()}
    env_vars = dict(runtime_env.get("env_vars") or {})
    env_vars.update(forwarded_environment())
    env_vars.update(run_environment(preset))
    runtime_env["env_vars"] = env_vars
    # workers on every node import this very package (even where it is not installed)
    package_dir = str(Path(terminal_agent.__file__).resolve().parent)
    runtime_env["py_modules"] = [*runtime_env.get("py_modules", []), package_dir]
    return runtime_env


# --- the dry run ---------------------------------------------------------------------------------
def sandbox_placement(preset: TrainingPreset, workflow_args: dict[str, Any]) -> SandboxPlacement:
    """Where the run's sandboxes run, in words, with the ray backend's planned slots (nothing is contacted)."""
    from terminal_agent.env import env_config_from_args

    config = env_config_from_args(workflow_args["env_args"]).sandbox
    episodes = preset.agent.parallel_episodes
    if config.backend == "ray":
        per_node = config.ray.max_sandboxes_per_node
        slots = preset.cluster.nodes * per_node
        where = (f"one SandboxHost Ray actor per node advertising {config.ray.host_resource!r} (0 CPUs, no GPU), "
                 f"beside verl's GPU workers; planned slots cluster.nodes x sandbox.ray.max_sandboxes_per_node = "
                 f"{preset.cluster.nodes} x {per_node} = {slots} for agent.parallel_episodes {episodes} (the live "
                 "cluster's slots are checked after ray.init)")
        return SandboxPlacement(backend=config.backend, where=where, parallel_episodes=episodes, planned_slots=slots)
    where = get_trainer_backend(preset.backend).sandbox_where(config.backend)
    return SandboxPlacement(backend=config.backend, where=where, parallel_episodes=episodes)


def placement_document(plan: LaunchPlan) -> dict[str, Any]:
    """The dry run's ``placement``: GPUs, batch arithmetic and sandboxes (:func:`placement_plan`)."""
    plan_record = placement_plan(plan.preset, sandbox_placement(plan.preset, plan.workflow_args))
    return plan_record.model_dump(mode="json", exclude_none=True)


def dry_run_document(plan: LaunchPlan) -> dict[str, Any]:
    """What a launch would use, secrets redacted: the placement plan first, then the NVLink multicast switches
    (verl backend), then everything handed to rLLM/verl or the local trainer."""
    backend = get_trainer_backend(plan.preset.backend)
    document: dict[str, Any] = {
        "placement": placement_document(plan),
        "nvlink_multicast_off": dict(backend.multicast_switches) or None,
        "preset": plan.preset.model_dump(mode="json"),
        "run_dir": str(plan.run_dir),
        "workflow_class": backend.trainer_path,
        "workflow_args": plan.workflow_args,
        "ray_runtime_env": ray_runtime_env(plan.preset) if backend.uses_ray else None,
        "notes": plan.notes,
    }
    document.update(backend.dry_run_fields(plan))
    return redact_mapping(document)


def verl_dry_run_fields(plan: LaunchPlan) -> dict[str, Any]:
    """The verl backend's keys of the dry run: model, data files, every hydra key and where it comes from, level 2."""
    fields: dict[str, Any] = {
        "model_path": plan.model_path,
        "train_files": plan.train_files,
        "val_files": plan.val_files,
        "hydra_overrides": [override.to_hydra() for override in plan.hydra_overrides],
        "raw_overrides": [override.to_hydra() for override in plan.raw_overrides],
        "hydra_key_sources": hydra_key_sources(plan),
    }
    if plan.level2 is not None:
        fields["level2"] = {"ran": plan.level2.ran, "where": plan.level2.where,
                            "verl": plan.level2.verl_version, "reason": plan.level2.reason}
    return fields


def hydra_key_sources(plan: LaunchPlan) -> dict[str, str]:
    """Where each hydra key the launch sets gets its value: ``preset KEY`` (the preset's file), ``command line
    KEY`` (a preset key given on the command line), ``mapping (KEY)`` (a value the project fixes; KEY governs it),
    ``command line`` (a raw hydra key). Keys not listed keep rLLM/verl's defaults."""
    command_line = set(plan.preset.command_line_keys)
    sources: dict[str, str] = {}
    for override in plan.hydra_overrides:
        if override.origin == "mapping":
            sources[override.key] = f"mapping ({override.source})"
        elif override.source in command_line:
            sources[override.key] = f"command line {override.source}"
        else:
            sources[override.key] = f"preset {override.source}"
    for raw_override in plan.raw_overrides:
        earlier = sources.get(raw_override.key)
        sources[raw_override.key] = "command line" if earlier is None else f"command line (agrees with {earlier})"
    return sources


def write_dry_run(plan: LaunchPlan) -> tuple[str, Path]:
    """The redacted dry-run YAML, also saved as ``<run_dir>/launch/dry_run.yaml`` (+ the composed verl config)."""
    text = yaml.safe_dump(dry_run_document(plan), sort_keys=False, width=120)
    launch_dir = plan.run_dir / "launch"
    launch_dir.mkdir(parents=True, exist_ok=True)
    path = launch_dir / "dry_run.yaml"
    path.write_text(text)
    if plan.trainer_config is not None:
        from omegaconf import OmegaConf

        composed = redact(OmegaConf.to_container(plan.trainer_config, resolve=False))
        (launch_dir / "trainer_config.yaml").write_text(yaml.safe_dump(composed, sort_keys=False, width=120))
    return text, path


# --- the real launch -----------------------------------------------------------------------------


def verl_task_split(preset: TrainingPreset) -> tuple[list[Any], list[Any]]:
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


def _check_epochs_cover_steps(preset: TrainingPreset, train_tasks: int) -> None:
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


def write_parquet_files(plan: LaunchPlan) -> None:
    """Convert the run's tasks (:func:`verl_task_split`) into its train/val parquet with our converter.

    When no validation task is left, the validation file holds the train tasks (verl needs one) and a
    note says so; ``trainer.test_freq=-1 trainer.val_before_train=false`` then skip validation except
    the final pass rLLM's trainer always runs."""
    preset = plan.preset
    if preset.data.train_files is not None:
        return
    from terminal_agent.tasks.parquet.rows import write_parquet

    if plan.train_files is None:
        raise ConfigError("the launch plan names no train parquet (plan_launch sets it for a verl run)")
    train, val = verl_task_split(preset)
    _check_epochs_cover_steps(preset, len(train))
    write_parquet(train, plan.train_files, split="train")
    if plan.val_files is not None:
        if not val:
            logger.warning("no validation task left: %s holds the train tasks", plan.val_files)
        write_parquet(val or train, plan.val_files, split="test")
    logger.info("wrote %d train / %d validation task(s) to %s", len(train), len(val), Path(plan.train_files).parent)


RLLM_MODEL_DIR = "model_for_rllm"
"""Beside the run: the model folder rLLM's VerlEngine is pointed at when the model's own does not suit it."""


NO_TRAINER_CONFIG = "the launch plan holds no composed rLLM/verl config (plan_launch composes it for a verl run)"


def point_verl_at_rllm_ready_model(plan: LaunchPlan) -> str | None:
    """rLLM's ``VerlEngine`` chooses its chat parser by the model folder's name and refuses a template its
    generic parser cannot split turn by turn (SmolLM2's, which adds its default system prompt to a message
    rendered alone). Where that is so, verl loads :func:`prepare_model_dir_for_rllm`'s folder beside the run
    (the same weights, linked; the template wrapped so that rLLM's check holds) and the Workflow renders
    prompts with its own parser. A hub id (no local folder) is left to rLLM. Returns the new path, or None."""
    from terminal_agent.training.verl.rllm_chat_parser import prepare_model_dir_for_rllm

    if plan.trainer_config is None:
        raise ConfigError(NO_TRAINER_CONFIG)
    path = str(plan.trainer_config.actor_rollout_ref.model.path)
    if not Path(path).is_dir():
        return None
    prepared = prepare_model_dir_for_rllm(path, plan.run_dir / RLLM_MODEL_DIR)
    if Path(prepared).resolve() == Path(path).resolve():
        return None
    plan.trainer_config.actor_rollout_ref.model.path = str(prepared)
    logger.info("rLLM's parser does not take %s's chat template: verl loads %s (same weights)", path, prepared)
    return str(prepared)


def _stop_stalled_run(reason: str) -> None:
    """The watchdog's end of a stalled run: say why, let Ray go (30 s at most), exit with EXIT_STALLED."""
    import threading

    from terminal_agent.training.verl.stall_watchdog import EXIT_STALLED

    logger.error("stopping the run: %s", reason)

    def shutdown() -> None:
        try:
            import ray

            ray.shutdown()
        except Exception as exc:  # noqa: BLE001 - the process exits next either way; the reason is logged
            logger.warning("ray.shutdown on the way out: %s", exc)

    worker = threading.Thread(target=shutdown, daemon=True)
    worker.start()
    worker.join(30)
    os._exit(EXIT_STALLED)  # the driver's own thread is blocked inside verl: only a hard exit ends the wait


def start_stall_watchdog(plan: LaunchPlan, on_stall: Callable[[str], None] | None = None) -> StallWatchdog | None:
    """A :class:`~terminal_agent.training.verl.stall_watchdog.StallWatchdog` over the run's metrics file, started; None
    when ``trainer.stall_timeout_s`` is None or the ``file`` logger is off (a note is logged)."""
    from terminal_agent.training.verl.stall_watchdog import StallWatchdog

    trainer = plan.preset.trainer
    if trainer.stall_timeout_s is None:
        return None
    path = run_environment(plan.preset).get("VERL_FILE_LOGGER_PATH")
    if "file" not in trainer.loggers or not path:
        logger.warning("trainer.stall_timeout_s is set but the file logger is off: a stalled run is not stopped")
        return None
    return StallWatchdog(Path(path), plan.run_dir, trainer.stall_timeout_s, on_stall or _stop_stalled_run).start()


def launch_verl(plan: LaunchPlan, rehearse: bool = False) -> None:
    """The verl backend's launch (its hook ``launch``)."""
    preset = plan.preset
    require_multicast_off(preset)  # again at launch time: the environment may have changed since the plan
    if rehearse:
        logger.warning("rehearsal: the vLLM and GPU checks are skipped and Ray gets %d GPU(s) it may not have; "
                       "the run stops at its first GPU or vLLM call", preset.cluster.total_gpus)
        check_packages(need_vllm=False)
    else:
        check_packages()
        check_local_gpus(preset)
    check_wandb(preset)
    from terminal_agent.training.verl.schema import validate_with_verl

    if plan.trainer_config is None:
        raise ConfigError(NO_TRAINER_CONFIG)
    validate_with_verl(plan.trainer_config)  # level 2 in-process now that verl imports: refuse before Ray starts
    workflow_class = load_object(WORKFLOW_CLASS_PATH, "the rLLM Workflow")
    from terminal_agent.env import env_config_from_args
    from terminal_agent.sandbox.backends import close_backends
    from terminal_agent.sandbox.cleanup import CleanupDaemon, sweep_leaked

    # every registered backend sweeps its own leaks on this node (one not reachable here is skipped)
    sandbox_config = env_config_from_args(plan.workflow_args["env_args"]).sandbox
    removed = sweep_leaked(sandbox_config)
    logger.info("removed %d leaked sandbox object(s) of dead runs", len(removed))
    daemon = CleanupDaemon(config=sandbox_config).start()
    try:
        write_parquet_files(plan)
        point_verl_at_rllm_ready_model(plan)
        os.environ.update(run_environment(preset))  # the driver reads them too (tokenizer, file logger)
        import ray
        from rllm.trainer.agent_trainer import AgentTrainer
        from rllm.trainer.verl.ray_runtime_env import get_ppo_ray_runtime_env

        if not ray.is_initialized():
            ray.init(runtime_env=ray_runtime_env(preset, get_ppo_ray_runtime_env()),
                     **ray_init_arguments(plan.trainer_config, rehearse=rehearse, gpus=preset.cluster.total_gpus))
        check_ray_cluster(preset)
        check_sandbox_slots(preset)
        trainer = AgentTrainer(workflow_class=workflow_class, workflow_args=plan.workflow_args,
                               config=plan.trainer_config, train_dataset=None, val_dataset=None, backend="verl")
        watchdog = start_stall_watchdog(plan)
        try:
            trainer.train()
        finally:
            if watchdog is not None:
                watchdog.stop()
    finally:
        daemon.stop()
        close_backends()  # before Ray goes: the ray backend ends its host actors here


def launch(plan: LaunchPlan, *, progress: Any = None, rehearse: bool = False) -> Any:
    """Run the validated plan (blocks until training ends). A local run reports to ``progress`` (a
    ``TrainingProgress``; None: quiet) and returns its ``TrainingSummary``; a verl run returns None.
    ``rehearse``: a verl launch on a machine without GPUs or vLLM, up to its first GPU call (module docstring)."""
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    write_dry_run(plan)  # the resolved, redacted config of every real run is kept beside its outputs
    return get_trainer_backend(plan.preset.backend).launch(plan, progress=progress, rehearse=rehearse)


__all__ = [
    "NVLINK_MULTICAST_OFF", "check_no_compaction", "check_no_verl_path_keys", "docker_daemon_answers",
    "dry_run_document", "hydra_key_sources", "launch", "launch_verl", "placement_document", "plan_launch", "plan_verl",
    "point_verl_at_rllm_ready_model", "ray_runtime_env", "require_multicast_off", "resolve_model_path",
    "resolve_sandbox_backend", "sandbox_placement", "start_stall_watchdog", "verl_dry_run_fields", "verl_task_split",
    "write_dry_run", "write_parquet_files",
]
