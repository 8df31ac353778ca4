"""launch_training.py exits with the status the error taxonomy assigns (``errors.exit_code_for``), like the CLI:
2 for the user's input (a bad preset key), 1 for what this machine lacks (a ``TrainingSetupError``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from terminal_agent.errors import ConfigError, TrainingSetupError, exit_code_for

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training_scripts" / "launch_training.py"


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), **(env or {})}
    environment.pop("TERMINAL_AGENT_VERL_PYTHON", None)
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--skip-level2"], capture_output=True, text=True,
                          env=environment, timeout=300, cwd=REPO)


def test_a_bad_preset_key_exits_with_the_user_input_status(tmp_path):
    done = run_script("local_cpu_smoke", "algorithm.adv_estimatr=grpo", f"trainer.output_dir={tmp_path}", "--dry-run")
    assert done.returncode == exit_code_for(ConfigError("x")) == 2, done.stderr
    assert "algorithm.adv_estimatr" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_setup_error_exits_with_the_taxonomy_status_not_the_user_input_one(tmp_path):
    """verl's schema directory named by the environment does not exist (or hydra is missing): this machine's
    fault, exit 1."""
    missing = tmp_path / "no-verl-config"
    out = tmp_path / "runs"
    done = run_script("test_8b_2_gpus", f"trainer.output_dir={out}", "--dry-run",
                      env={"TERMINAL_AGENT_VERL_CONFIG_DIR": str(missing)})
    assert done.returncode == exit_code_for(TrainingSetupError("x")) == 1, done.stderr
    named = "TERMINAL_AGENT_VERL_CONFIG_DIR" in done.stderr and "is not a directory" in done.stderr
    assert named or "hydra-core is not installed" in done.stderr, done.stderr  # hydra is looked for first
    assert "Traceback" not in done.stderr
    assert not out.exists()  # nothing was saved or started
