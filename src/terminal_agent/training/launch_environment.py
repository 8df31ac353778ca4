"""What a launch sets up around its trainer, whichever the trainer backend: the backend-neutral launcher and
the verl backend's launch both use it.

:func:`load_object` imports what a launch runs (``module:attribute``: the trainer, rLLM's Workflow) with a
:class:`TrainingSetupError` naming what is missing; :func:`bwrap_settings` and :func:`exported_images_dir` are
the bwrap settings and the image export a run's sandboxes read. (The environment of a verl run's processes:
:mod:`terminal_agent.training.verl.worker_environment`.)
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from terminal_agent.errors import TrainingSetupError
from terminal_agent.sandbox.bwrap.settings import BwrapConfig
from terminal_agent.sandbox.bwrap.settings import bwrap_settings as bwrap_section_of
from terminal_agent.training.preset_config import TrainingPreset


def load_object(path: str, what: str) -> Any:
    module_name, _, name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise TrainingSetupError(f"{what} ({path}) is not in this installation of terminal-agent") from None
        raise TrainingSetupError(f"{what} ({path}) does not import: missing package {exc.name!r} (the GPU path: "
                                 "bash scripts/setup.sh --gpu; the local trainer: pip install -e '.[model]')") from None
    return getattr(module, name)


def bwrap_settings(preset: TrainingPreset) -> BwrapConfig:
    """The bwrap settings the run's sandboxes get (``sandbox.env.sandbox.bwrap``), typed and checked as the episode
    spec checks them (a bad value is a ConfigError naming its preset key). A preset whose ``sandbox.backend`` is
    still ``auto`` (resolved at launch) is read as bwrap would read it."""
    from terminal_agent.rollout.episode_spec import EpisodeSpec

    if preset.sandbox.backend == "auto":
        preset = preset.model_copy(update={"sandbox": preset.sandbox.model_copy(update={"backend": "bwrap"})})
    return bwrap_section_of(EpisodeSpec.from_preset(preset).env.sandbox)


def exported_images_dir(preset: TrainingPreset) -> str | None:
    """The bwrap export the run's sandboxes read (``sandbox.env.sandbox.bwrap.images_dir``, else
    ``$TERMINAL_AGENT_IMAGES_DIR``), or None."""
    images_dir = bwrap_settings(preset).images_dir
    return images_dir or os.environ.get("TERMINAL_AGENT_IMAGES_DIR") or None


__all__ = ["bwrap_settings", "exported_images_dir", "load_object"]
