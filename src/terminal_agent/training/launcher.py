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

Every backend's preset type holds only the keys that backend reads (``training/<backend>/preset_sections.py``),
so a key of another backend is refused when the preset loads. For ``backend: local`` the plan holds
the local trainer's config (:meth:`LocalTrainingConfig.from_preset`, built once: the launch runs
that very config), so a dry run refuses what the launch would, each value named by its preset key.

:func:`launch` for ``backend: verl`` checks the machine (packages, GPUs, Ray nodes, wandb), sweeps
leaked sandboxes and keeps the cleanup daemon running, writes the parquet files with our
converter, and hands our Workflow class to rLLM's ``AgentTrainer`` through its Python API, with a
Ray ``runtime_env`` that ships this package to every worker. rLLM is used as installed, never
patched. For ``backend: local`` it calls the local trainer.

``launch(plan, rehearse=True)`` runs that same verl launch on a machine without GPUs (or vLLM):
the vLLM and GPU checks become log lines, Ray is started with ``cluster.gpus_per_node`` GPUs it
does not have, and the run goes as far as it can (Ray, verl's validation, the parquet, the
trainer's workers) until the first call that needs a GPU or vLLM fails. CI drives it so.

This module is the part common to every trainer backend: :func:`plan_launch`'s common checks, the dry
run, and the dispatch to the backend's hooks (:func:`~terminal_agent.training.trainer_backends.get_trainer_backend`).
The verl backend's own half (its plan, its dry-run keys, the machine checks, the parquet, the launch)
is in :mod:`terminal_agent.training.verl.launch`, :mod:`~terminal_agent.training.verl.machine_checks`
and :mod:`~terminal_agent.training.verl.data_files`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from terminal_agent.errors import ConfigError
from terminal_agent.training.episode_args import workflow_args_for
from terminal_agent.training.launch_plan import LaunchPlan, RawOverride, SandboxPlacement
from terminal_agent.training.preset_config import TrainingPreset
from terminal_agent.training.redaction import redact_mapping
from terminal_agent.training.trainer_backends import get_trainer_backend


# --- validation ----------------------------------------------------------------------------------
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


def _check_sandbox_backend(preset: TrainingPreset) -> None:
    from terminal_agent.sandbox.backends import SANDBOX_BACKENDS

    if preset.sandbox.backend not in SANDBOX_BACKENDS:
        raise ConfigError(f"sandbox.backend: {preset.sandbox.backend!r} is not a sandbox backend of this version "
                          f"(valid: {', '.join(SANDBOX_BACKENDS.names())})")


def _check_env_and_agent(workflow_args: dict[str, Any]) -> None:
    """Read the episode spec back from the Workflow's arguments and build its env and agent from it, exactly as the
    Workflow will (nothing is started)."""
    from pydantic import ValidationError

    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.env import DockerIsolatedEnv
    from terminal_agent.rollout.episode_spec import EpisodeSpec

    spec = EpisodeSpec.among_workflow_args(workflow_args)
    try:
        DockerIsolatedEnv(config=spec.env)
    except ConfigError as exc:
        raise ConfigError(f"sandbox.env: {exc}") from None
    try:
        TerminalBenchAgent(spec.agent_config(training=True))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"agent: agent setting {'.'.join(map(str, first.get('loc', ())))!r}: "
                          f"{first.get('msg')}") from None


def _check_data_paths(preset: TrainingPreset) -> None:
    """The common data keys' files (a backend checks its own: verl's ``data.train_files``, ``data.task_ids``...)."""
    data = preset.data
    if data.ready_parquet() is None and data.tasks is not None and not Path(data.tasks).expanduser().exists():
        raise ConfigError(f"data.tasks: {data.tasks} does not exist (a CSV, a task directory or a directory of them)")
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


def plan_launch(preset: TrainingPreset, *, raw_overrides: list[RawOverride] | tuple[RawOverride, ...] = (),
                level2: bool = True, verl_python: str | None = None) -> LaunchPlan[Any]:
    """Validate ``preset`` and the command line's raw rLLM/verl keys completely (nothing is started).
    Raises ConfigError / TrainingSetupError."""
    notes: list[str] = []
    backend = get_trainer_backend(preset.backend)
    backend.check_launch(preset, raw_overrides)
    preset = resolve_sandbox_backend(preset, notes)
    plan: LaunchPlan[Any] = LaunchPlan(preset=preset, run_dir=preset.run_dir, raw_overrides=list(raw_overrides),
                                       notes=notes)
    _check_sandbox_backend(preset)
    backend.check_geometry(preset)
    _check_data_paths(preset)
    plan.workflow_args = workflow_args_for(preset)
    _check_env_and_agent(plan.workflow_args)
    return backend.plan(plan, level2=level2, verl_python=verl_python)


# --- the dry run ---------------------------------------------------------------------------------
def sandbox_placement(preset: TrainingPreset, workflow_args: dict[str, Any]) -> SandboxPlacement:
    """Where the run's sandboxes run, in words, with the ray backend's planned slots (nothing is contacted)."""
    from terminal_agent.rollout.episode_spec import EpisodeSpec

    config = EpisodeSpec.among_workflow_args(workflow_args).env.sandbox
    episodes = preset.agent.parallel_episodes
    if config.backend == "ray":
        from terminal_agent.sandbox.ray.settings import ray_settings

        settings = ray_settings(config)
        per_node = settings.max_sandboxes_per_node
        slots = preset.cluster.nodes * per_node
        where = (f"one SandboxHost Ray actor per node advertising {settings.host_resource!r} (0 CPUs, no GPU), "
                 f"beside verl's GPU workers; planned slots cluster.nodes x sandbox.ray.max_sandboxes_per_node = "
                 f"{preset.cluster.nodes} x {per_node} = {slots} for agent.parallel_episodes {episodes} (the live "
                 "cluster's slots are checked after ray.init)")
        return SandboxPlacement(backend=config.backend, where=where, parallel_episodes=episodes, planned_slots=slots)
    where = get_trainer_backend(preset.backend).sandbox_where(config.backend)
    return SandboxPlacement(backend=config.backend, where=where, parallel_episodes=episodes)


def placement_document(plan: LaunchPlan[Any]) -> dict[str, Any]:
    """The dry run's ``placement``: the backend's (verl: GPUs and batch arithmetic, its geometry checked first),
    then the sandboxes."""
    backend = get_trainer_backend(plan.preset.backend)
    return {"backend": plan.preset.backend, **backend.placement(plan.preset),
            "sandboxes": sandbox_placement(plan.preset, plan.workflow_args).model_dump(mode="json", exclude_none=True)}


def dry_run_document(plan: LaunchPlan[Any]) -> dict[str, Any]:
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
        "ray_runtime_env": None,  # a Ray backend's dry_run_fields give it (update keeps the key's place)
        "notes": plan.notes,
    }
    document.update(backend.dry_run_fields(plan))
    return redact_mapping(document)


def write_dry_run(plan: LaunchPlan[Any]) -> tuple[str, Path]:
    """The redacted dry-run YAML, also saved as ``<run_dir>/launch/dry_run.yaml``, with the backend's own files
    beside it (verl: the composed ``trainer_config.yaml``)."""
    text = yaml.safe_dump(dry_run_document(plan), sort_keys=False, width=120)
    launch_dir = plan.run_dir / "launch"
    launch_dir.mkdir(parents=True, exist_ok=True)
    path = launch_dir / "dry_run.yaml"
    path.write_text(text)
    get_trainer_backend(plan.preset.backend).write_launch_files(plan, launch_dir)
    return text, path


# --- the real launch -----------------------------------------------------------------------------
def launch(plan: LaunchPlan[Any], *, progress: Any = None, rehearse: bool = False) -> Any:
    """Run the validated plan (blocks until training ends). A local run reports to ``progress`` (a
    ``TrainingProgress``; None: quiet) and returns its ``TrainingSummary``; a verl run returns None.
    ``rehearse``: a verl launch on a machine without GPUs or vLLM, up to its first GPU call (module docstring)."""
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    write_dry_run(plan)  # the resolved, redacted config of every real run is kept beside its outputs
    return get_trainer_backend(plan.preset.backend).launch(plan, progress=progress, rehearse=rehearse)


__all__ = [
    "docker_daemon_answers", "dry_run_document",
    "launch", "placement_document", "plan_launch", "resolve_sandbox_backend", "sandbox_placement", "write_dry_run",
]
