"""The machine a verl run starts on, checked before anything is started, and what Ray is asked for.

Before Ray: the GPU readiness report (:func:`~terminal_agent.training.gpu_readiness.require_ready`: the driver,
the GPUs, :func:`package_problems` (verl, Ray, vLLM, tensordict and rLLM at the versions of :data:`TRAIN_PINS`),
the sandbox backend) and :func:`check_wandb`; a rehearsal checks :func:`check_packages` only. After
``ray.init``: :func:`check_ray_cluster` (alive nodes, GPUs, and the CPUs verl's placement group reserves,
:func:`ray_cpus_needed`) and :func:`check_sandbox_slots` (the sandbox backend's capacity against
``agent.parallel_episodes``). :func:`ray_init_arguments` is what ``ray.init`` gets besides the runtime env. Each failure is a :class:`TrainingSetupError` naming what to install
or start.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import TrainingSetupError
from terminal_agent.training.verl.preset_sections import VerlPreset

if TYPE_CHECKING:  # hydra-core is imported where a verl launch needs it
    from omegaconf import DictConfig

#: Package pins of the ``[train]`` extra that a real verl launch checks: the versions of requirements/gpu-py312.lock,
#: which are the node runtime's ``required_pins`` (tests/training/test_gpu_pins.py holds the three together).
TRAIN_PINS = {"verl": "0.9.1", "ray": "2.60.0", "vllm": "0.24.0", "tensordict": "0.10.0"}
#: rLLM HEAD, not on the package registry: ``bash scripts/setup.sh --gpu`` installs it --no-deps (its own
#: dependencies do not resolve beside verl 0.9.1), from the project's shared wheel or from git at this commit.
RLLM_COMMIT = "9beb6e0f676a46d38858991fd79ac5f8e0b16d4c"
RLLM_VERSION = "0.3.0rc0"
SETUP_GPU = "bash scripts/setup.sh --gpu"


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def package_problems(*, need_vllm: bool = True) -> list[tuple[str, str]]:
    """``(problem, fix)`` for each of :data:`TRAIN_PINS` (vLLM's unless ``need_vllm`` is false) missing or at another
    version, and for rLLM missing, at another version or not importing; empty when all is in place."""
    from terminal_agent.training.gpu_lock import same_release

    problems = []
    for name, pin in TRAIN_PINS.items():
        if name == "vllm" and not need_vllm:
            continue
        found = _version(name)
        if found is None:
            problems.append((f"{name} is not installed",
                             f"{SETUP_GPU} (requirements/gpu-py312.lock has {name}=={pin})"))
        elif not same_release(found, pin):
            problems.append((f"{name} {found} is installed; the presets are validated for {name}=={pin}", SETUP_GPU))
    rllm = _version("rllm")
    installs = f"{SETUP_GPU} (it installs rLLM {RLLM_COMMIT[:8]} --no-deps)"
    if rllm is None:
        problems.append(("rLLM is not installed (it is not on the package registry)", installs))
    elif rllm != RLLM_VERSION:
        problems.append((f"rLLM {rllm} is installed; the launch needs rLLM HEAD {RLLM_COMMIT[:8]} ({RLLM_VERSION})",
                         installs))
    elif not problems:  # rLLM's trainer imports verl and Ray: a missing one is already named above
        try:
            importlib.import_module("rllm.trainer.agent_trainer")
        except ImportError as exc:
            problems.append((f"rLLM does not import ({exc})", installs))
    return problems


def check_packages(*, need_vllm: bool = True) -> None:
    """verl, Ray, tensordict, vLLM (unless ``need_vllm`` is false) and rLLM installed at their pins: the first
    problem of :func:`package_problems` as a :class:`TrainingSetupError`."""
    problems = package_problems(need_vllm=need_vllm)
    if problems:
        problem, fix = problems[0]
        raise TrainingSetupError(f"{problem}: {fix}")


def check_local_gpus(preset: VerlPreset) -> int:
    """GPUs of this node; at least ``cluster.gpus_per_node`` must be visible."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < preset.cluster.gpus_per_node:
        raise TrainingSetupError(f"cluster.gpus_per_node is {preset.cluster.gpus_per_node} but this node sees "
                                 f"{count} CUDA GPU(s)")
    return count


def check_ray_cluster(preset: VerlPreset) -> None:
    """After ``ray.init``: enough alive nodes and GPUs for ``cluster``."""
    import ray

    alive = [node for node in ray.nodes() if node.get("Alive")]
    resources = ray.cluster_resources()
    gpus, cpus = int(resources.get("GPU", 0)), int(resources.get("CPU", 0))
    if len(alive) < preset.cluster.nodes:
        raise TrainingSetupError(f"cluster.nodes is {preset.cluster.nodes} but the Ray cluster has {len(alive)} alive "
                                 "node(s): start Ray on every node (ray start --address=HEAD:6379) first")
    if gpus < preset.cluster.total_gpus:
        raise TrainingSetupError(f"the preset needs {preset.cluster.total_gpus} GPUs; the Ray cluster has {gpus}")
    needed = ray_cpus_needed(preset.cluster.total_gpus)
    if cpus < needed:  # verl's placement group would wait for them for ever
        raise TrainingSetupError(f"the Ray cluster has {cpus} CPU(s); verl reserves {VERL_CPUS_PER_GPU} per GPU and "
                                 f"rLLM's TaskRunner one: {needed} for {preset.cluster.total_gpus} GPU(s) (give Ray "
                                 "more with ray_kwargs.ray_init.num_cpus=N, or ray start --num-cpus N)")


def check_sandbox_slots(preset: VerlPreset) -> int | None:
    """After ``ray.init``: the sandbox backend's capacity (its ``capacity`` hook; ray: host nodes x
    ``max_sandboxes_per_node``) must cover ``agent.parallel_episodes`` (each episode holds one
    sandbox); the slot count, or None for a backend that runs on this node only."""
    from terminal_agent.rollout.episode_spec import EpisodeSpec
    from terminal_agent.sandbox.backends import get_backend

    config = EpisodeSpec.from_preset(preset).env.sandbox
    capacity = get_backend(config.backend).capacity(config)
    if capacity is None:
        return None
    needed = preset.agent.parallel_episodes
    if capacity.total < needed:
        raise TrainingSetupError(
            f"agent.parallel_episodes is {needed} but the {config.backend} sandbox backend has {capacity.total} "
            f"sandbox slot(s) ({capacity.detail}): {capacity.advice}"
        )
    return capacity.total


def check_wandb(preset: VerlPreset) -> None:
    if "wandb" not in preset.trainer.loggers or preset.trainer.wandb_mode == "disabled":
        return
    if _version("wandb") is None:
        raise TrainingSetupError("trainer.loggers has wandb but wandb is not installed (pip install wandb)")
    if preset.trainer.wandb_mode == "online" and not os.environ.get("WANDB_API_KEY") and not (
            Path.home() / ".netrc").exists():
        raise TrainingSetupError("trainer.wandb_mode=online needs WANDB_API_KEY (or wandb login); "
                                 "offline needs nothing")


def ray_init_arguments(trainer_config: DictConfig, *, rehearse: bool, gpus: int) -> dict[str, Any]:
    """Keyword arguments of ``ray.init`` besides the runtime env: rLLM's (an existing cluster's address), verl's
    ``ray_kwargs.ray_init`` (non-null values; raw keys such as ``ray_kwargs.ray_init.num_cpus=8`` reach Ray so),
    and for a rehearsal ``num_gpus`` the machine does not have, on a private local cluster (never one found
    running here, unless ``ray_kwargs.ray_init.address`` names it)."""
    from omegaconf import OmegaConf
    from rllm.trainer.ray_init_utils import get_ray_init_settings

    from terminal_agent.training.verl.schema import config_dict

    arguments: dict[str, Any] = {} if rehearse else dict(get_ray_init_settings(trainer_config))
    section = OmegaConf.select(trainer_config, "ray_kwargs.ray_init", default=None)
    ray_init = config_dict(section, resolve=True, what="ray_kwargs.ray_init") if section is not None else {}
    for key, value in ray_init.items():
        if key != "runtime_env" and value is not None:
            arguments[key] = value
    if rehearse and "address" not in arguments:
        arguments.setdefault("num_gpus", gpus)
        arguments.setdefault("num_cpus", max(os.cpu_count() or 1, ray_cpus_needed(gpus)))
    return arguments


#: CPUs verl's resource pool reserves per GPU (``RayResourcePool.max_colocate_count``: actor/ref, rollout,
#: reward model); a placement group that cannot get them waits for ever instead of failing.
VERL_CPUS_PER_GPU = 3


def ray_cpus_needed(gpus: int) -> int:
    """Logical CPUs a verl run of ``gpus`` GPUs asks Ray for: verl's bundles, rLLM's TaskRunner, one spare."""
    return VERL_CPUS_PER_GPU * gpus + 2


__all__ = ["RLLM_COMMIT", "RLLM_VERSION", "TRAIN_PINS", "VERL_CPUS_PER_GPU", "check_local_gpus", "check_packages",
           "check_ray_cluster", "check_sandbox_slots", "check_wandb", "package_problems", "ray_cpus_needed",
           "ray_init_arguments"]
