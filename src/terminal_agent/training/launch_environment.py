"""What a launch sets up around its trainer, whichever the trainer backend: the backend-neutral launcher and
the verl backend's launch both use it.

:func:`load_object` imports what a launch runs (``module:attribute``: the trainer, rLLM's Workflow) with a
:class:`TrainingSetupError` naming what is missing; :func:`exported_images_dir` is the bwrap export a run's
sandboxes read; :func:`forwarded_environment` is the host variables a run's workers get
(:data:`FORWARDED_ENV_PREFIXES`) and :func:`run_environment` the variables the run sets for itself and them
(wandb mode, the file logger's :data:`VERL_METRICS_FILE`, the preset's ``runtime_env.env_vars``, the trainer
backend's ``multicast_switches``).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from terminal_agent.errors import TrainingSetupError
from terminal_agent.training.preset_config import TrainingPreset
from terminal_agent.training.trainer_backends import get_trainer_backend

#: Host environment variables Ray workers get, besides those rLLM forwards itself (VLLM_, HF_, NCCL_ ...).
FORWARDED_ENV_PREFIXES = ("WANDB_", "LITELLM_", "LITE_LLM_", "TERMINAL_AGENT_", "HF_", "DOCKER_", "ANTHROPIC_",
                          "OPENAI_")


def load_object(path: str, what: str) -> Any:
    module_name, _, name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise TrainingSetupError(f"{what} ({path}) is not in this installation of terminal-agent") from None
        raise TrainingSetupError(f"{what} ({path}) does not import: missing package {exc.name!r} "
                                 f"(pip install -e '.[train]')") from None
    return getattr(module, name)


def exported_images_dir(preset: TrainingPreset) -> str | None:
    """The bwrap export the run's sandboxes read (``sandbox.env.sandbox.bwrap.images_dir``, else
    ``$TERMINAL_AGENT_IMAGES_DIR``), or None."""
    sandbox = dict(preset.sandbox.env.get("sandbox") or preset.sandbox.env.get("sandbox_config") or {})
    bwrap = sandbox.get("bwrap")
    images_dir = bwrap.get("images_dir") if isinstance(bwrap, dict) else None
    return str(images_dir) if images_dir else os.environ.get("TERMINAL_AGENT_IMAGES_DIR") or None


def forwarded_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Host variables our Ray workers get (judge keys, wandb, our settings)."""
    environ = dict(os.environ) if environ is None else environ
    return {name: value for name, value in sorted(environ.items()) if name.startswith(FORWARDED_ENV_PREFIXES)}


VERL_METRICS_FILE = "verl_metrics.jsonl"
"""Where verl's ``file`` logger writes one JSON line per step, in the run directory."""


def run_environment(preset: TrainingPreset) -> dict[str, str]:
    """Variables the run sets for itself and its workers: wandb mode, the file logger's path (``file`` in
    ``trainer.loggers``), ``runtime_env.env_vars`` of the preset (which win over those), and for a verl run
    :data:`~terminal_agent.training.verl.launch.NVLINK_MULTICAST_OFF` last
    (:func:`~terminal_agent.training.verl.launch.require_multicast_off` refuses a preset value that turns it on)."""
    env_vars: dict[str, str] = {"WANDB_MODE": preset.trainer.wandb_mode}
    if "file" in preset.trainer.loggers:
        env_vars["VERL_FILE_LOGGER_PATH"] = str((preset.run_dir / VERL_METRICS_FILE).resolve())
    env_vars.update(preset.runtime_env.env_vars)
    env_vars.update(get_trainer_backend(preset.backend).multicast_switches)
    return env_vars


__all__ = ["FORWARDED_ENV_PREFIXES", "VERL_METRICS_FILE", "exported_images_dir", "forwarded_environment", "load_object",
           "run_environment"]
