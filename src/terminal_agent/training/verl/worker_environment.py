"""What every process of a verl run gets in its environment, and the rule that keeps NVLink multicast off.

:func:`run_environment` is what the run sets for itself and its workers (wandb mode, the file logger's
:data:`VERL_METRICS_FILE`, the preset's ``runtime_env.env_vars``, the trainer backend's ``multicast_switches``
last); :func:`forwarded_environment` the host variables its Ray workers get (:data:`FORWARDED_ENV_PREFIXES`);
:func:`ray_runtime_env` the Ray ``runtime_env`` built from both, with this package shipped to every worker.
:func:`require_multicast_off` refuses a launch whose environment or preset turns one of
:data:`NVLINK_MULTICAST_OFF` on.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.training.verl.preset_sections import VerlPreset
from terminal_agent.training.trainer_backends import get_trainer_backend
from terminal_agent.training.verl.attention_names import PACKED_ATTENTION_MODULE, PACKED_ATTENTION_NAME

#: Host environment variables Ray workers get, besides those rLLM forwards itself (VLLM_, HF_, NCCL_ ...).
FORWARDED_ENV_PREFIXES = ("WANDB_", "LITELLM_", "LITE_LLM_", "TERMINAL_AGENT_", "HF_", "DOCKER_", "ANTHROPIC_",
                          "OPENAI_")
#: NVLink multicast (NVLS) off in every process of a verl launch (issue 39): NCCL's NVLS all-reduce, torch's
#: symmetric-memory multicast and NVSHMEM's NVLS. Set in the launcher's own environment and in every Ray
#: worker's; a launch whose environment turns one on is refused.
NVLINK_MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
#: The values of each variable that keep multicast off (compared case-insensitively, spaces stripped).
_MULTICAST_OFF_VALUES = {"NCCL_NVLS_ENABLE": {"0"},
                         "TORCH_SYMM_MEM_DISABLE_MULTICAST": {"1", "true", "yes", "on"},
                         "NVSHMEM_DISABLE_NVLS": {"1", "true", "yes", "y", "on"}}


def forwarded_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Host variables our Ray workers get (judge keys, wandb, our settings)."""
    environ = dict(os.environ) if environ is None else environ
    return {name: value for name, value in sorted(environ.items()) if name.startswith(FORWARDED_ENV_PREFIXES)}


#: Modules ``import verl`` imports in every process (comma list): the project's packed attention registers there
#: too, also in the processes that build no verl model config (the ``external_lib`` key covers those that do).
VERL_EXTERNAL_MODULES = "VERL_USE_EXTERNAL_MODULES"

VERL_METRICS_FILE = "verl_metrics.jsonl"
"""Where verl's ``file`` logger writes one JSON line per step, in the run directory."""


def run_environment(preset: VerlPreset) -> dict[str, str]:
    """Variables the run sets for itself and its workers: wandb mode, the file logger's path (``file`` in
    ``trainer.loggers``), ``runtime_env.env_vars`` of the preset (which win over those), the packed attention's
    module in :data:`VERL_EXTERNAL_MODULES` where the preset picks it, and for a verl run
    :data:`NVLINK_MULTICAST_OFF` last
    (:func:`require_multicast_off` refuses a preset value that turns it on)."""
    env_vars: dict[str, str] = {"WANDB_MODE": preset.trainer.wandb_mode}
    if "file" in preset.trainer.loggers:
        env_vars["VERL_FILE_LOGGER_PATH"] = str((preset.run_dir / VERL_METRICS_FILE).resolve())
    env_vars.update(preset.runtime_env.env_vars)
    if preset.backend == "verl" and preset.model.attn_implementation == PACKED_ATTENTION_NAME:
        env_vars[VERL_EXTERNAL_MODULES] = _with_module(env_vars.get(VERL_EXTERNAL_MODULES), PACKED_ATTENTION_MODULE)
    env_vars.update(get_trainer_backend(preset.backend).multicast_switches)
    return env_vars


def _with_module(modules: str | None, module: str) -> str:
    """A comma list of modules (verl's ``VERL_USE_EXTERNAL_MODULES``) with ``module`` in it, once."""
    names = [name.strip() for name in (modules or "").split(",") if name.strip()]
    return ",".join(names if module in names else [*names, module])


def require_multicast_off(preset: VerlPreset, environ: dict[str, str] | None = None) -> None:
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


def ray_runtime_env(preset: VerlPreset, base: dict[str, Any] | None = None) -> dict[str, Any]:
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


__all__ = ["FORWARDED_ENV_PREFIXES", "NVLINK_MULTICAST_OFF", "VERL_EXTERNAL_MODULES", "VERL_METRICS_FILE",
           "forwarded_environment", "ray_runtime_env", "require_multicast_off", "run_environment"]
