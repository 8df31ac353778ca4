"""Shared by the tests that run the bwrap backend: one image export and one state dir per test session.

The export is made from the local Docker daemon's images (``terminal-agent images export``'s code),
then used without it; bwrap itself must be installed (scripts/setup.sh does it).
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from terminal_agent.sandbox.bwrap.settings import BwrapConfig
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task

_LOCK = threading.Lock()
_ROOT: list[Path] = []
_EXPORTED: set[str] = set()


def require_bwrap() -> None:
    """Skip (locally) or fail (CI) when bwrap cannot run here."""
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        message = "bubblewrap is not installed or not root; run scripts/setup.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _root() -> Path:
    """One cache for every session: the export and unpacked layers are reused (both are keyed by content)."""
    if not _ROOT:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        _ROOT.append(Path(base) / "terminal-agent" / "bwrap-tests")
    return _ROOT[0]


def bwrap_config(tasks: list[Task] = (), **fields) -> SandboxConfig:
    """A bwrap SandboxConfig whose export holds the base image and ``tasks``' images (exported now if needed)."""
    from terminal_agent.sandbox.images.export import export_images

    require_bwrap()
    with _LOCK:
        todo = [task for task in tasks if task.task_id not in _EXPORTED]
        if todo or not _EXPORTED:
            export_images(list(todo), _root() / "export")
            _EXPORTED.update(task.task_id for task in todo)
            _EXPORTED.add("")
    bwrap = BwrapConfig(images_dir=str(_root() / "export"), state_dir=str(_root() / "state"))
    return SandboxConfig(backend="bwrap", bwrap=bwrap, **fields)
