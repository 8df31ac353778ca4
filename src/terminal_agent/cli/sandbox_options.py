"""The `--sandbox` / `--images-dir` options that `eval run` and `tasks validate` share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # imported lazily at run time (the commands start fast)
    from terminal_agent.sandbox.config import SandboxConfig


def sandbox_config_from_options(backend: str, images_dir: Path | None) -> SandboxConfig:
    """The sandbox settings of a command's episodes; an unknown backend is a usage error that lists the known ones."""
    from pydantic import ValidationError

    from terminal_agent.sandbox.bwrap.settings import BwrapConfig
    from terminal_agent.sandbox.config import SandboxConfig

    if images_dir is not None and backend != "bwrap":
        raise typer.BadParameter("--images-dir is for --sandbox bwrap", param_hint="--images-dir")
    try:
        bwrap = BwrapConfig(images_dir=str(images_dir) if images_dir else None)
        return SandboxConfig.model_validate({"backend": backend, "bwrap": bwrap})
    except ValidationError as exc:  # the config's own check names the valid backends
        raise typer.BadParameter(exc.errors()[0]["msg"], param_hint="--sandbox") from exc
