"""Stock Harbor (0.25, Python 3.12) as the reference of the tests: the venv ``scripts/setup_harbor_venv.sh`` builds.

``harbor_python()`` builds the venv once per machine (idempotent, ~30 s the first time) and returns its python; the
``harbor`` CLI sits beside it. A machine without Python 3.12 (the script exits 3) skips the tests that need it; any
other failure of the script fails them.
"""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NO_PYTHON_312 = 3
"""setup_harbor_venv.sh's exit status when no Python 3.12+ exists."""


@functools.lru_cache(maxsize=1)
def _build() -> tuple[int, str]:
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup_harbor_venv.sh")], capture_output=True, text=True,
                         timeout=900)
    return run.returncode, run.stdout.strip() if run.returncode == 0 else run.stderr[-2000:]


def harbor_python() -> Path:
    """The stock Harbor venv's python (skips the test only when no Python 3.12 exists)."""
    code, text = _build()
    if code == NO_PYTHON_312:
        pytest.skip("no Python 3.12 on this machine: stock Harbor cannot be installed")
    assert code == 0, f"scripts/setup_harbor_venv.sh failed ({code}): {text}"
    return Path(text.splitlines()[-1])


def harbor(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the stock ``harbor`` CLI."""
    return subprocess.run([str(harbor_python().parent / "harbor"), *args], capture_output=True, text=True,
                          timeout=timeout)


def harbor_task_configs(task_dirs: list[Path]) -> dict[str, dict]:
    """Each folder's task.toml as Harbor's own ``TaskConfig`` reads it (``model_dump(mode="json")``), or
    ``{"error": ...}`` where Harbor refuses it."""
    script = (
        "import json, sys, tomllib\n"
        "from harbor.models.task.config import TaskConfig\n"
        "out = {}\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        text = open(path + '/task.toml').read()\n"
        "        out[path] = TaskConfig.model_validate(tomllib.loads(text)).model_dump(mode='json')\n"
        "    except Exception as exc:  # reported per task: the caller asserts on it\n"
        "        out[path] = {'error': repr(exc)}\n"
        "print(json.dumps(out))\n"
    )
    run = subprocess.run([str(harbor_python()), "-W", "ignore", "-c", script, *map(str, task_dirs)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)
