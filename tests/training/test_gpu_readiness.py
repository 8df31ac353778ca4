"""The GPU readiness report (training/gpu_readiness.py): what a real launch here would still refuse, each with its
fix; ``launch_training.py PRESET --check-machine`` prints it (exit 2 unless nothing), the dry run ends with it, and a
real launch refuses with it (exit 2) before Ray starts. On this CPU machine it must name the missing GPU and the
missing GPU packages; on a GPU machine with ``bash scripts/setup.sh --gpu`` done those tests skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from terminal_agent.errors import MachineNotReadyError, TrainingSetupError, exit_code_for
from terminal_agent.training import gpu_readiness
from terminal_agent.training.gpu_lock import LockDifference, lock_differences, same_release, summarize
from terminal_agent.training.gpu_readiness import (
    ReadinessReport,
    Refusal,
    driver_too_old,
    driver_version_from_proc,
    machine_readiness,
    require_ready,
    torch_facts,
)
from terminal_agent.training.preset_config import load_preset
from terminal_agent.training.verl.machine_checks import package_problems

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training_scripts" / "launch_training.py"
NO_GPU = torch_facts().gpus == 0
PACKAGES_MISSING = bool(package_problems())
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="this machine has a CUDA GPU torch can use")


def run_script(*args: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    environment.pop("TERMINAL_AGENT_VERL_PYTHON", None)
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=environment,
                          timeout=300, cwd=REPO)


@pytest.fixture(scope="module")
def report() -> ReadinessReport:
    return machine_readiness(load_preset("verl_1gpu"))


@needs_no_gpu
def test_the_report_names_the_missing_gpu(report):
    assert not report.ready
    lines = report.lines()
    assert lines[0] == "a real launch of verl_1gpu here would still refuse:"
    gpu = [line for line in lines if "no CUDA GPU visible to torch" in line]
    assert gpu and "cluster.gpus_per_node=1" in gpu[0]
    if gpu_readiness.nvidia_driver_version() is None:
        assert any(line.startswith("  no NVIDIA driver") and ">= 580" in line for line in lines)


@pytest.mark.skipif(not PACKAGES_MISSING, reason="verl, vLLM, Ray, tensordict and rLLM are installed at their pins")
def test_the_report_names_the_missing_packages_and_the_command_that_installs_them(report):
    lines = report.lines()
    for problem, fix in package_problems():
        assert f"  {problem}: {fix}" in lines
        assert "bash scripts/setup.sh --gpu" in fix and ".[train]" not in fix


def test_packages_that_differ_from_the_lock_are_a_note_not_a_refusal(report):
    assert all("of the lock's" not in refusal.line() for refusal in report.refusals)
    for note in report.notes:
        assert note.startswith(tuple("0123456789")) and "bash scripts/setup.sh --gpu" in note


@needs_no_gpu
def test_check_machine_prints_the_report_and_exits_2():
    done = run_script("verl_1gpu", "--check-machine")
    assert done.returncode == 2, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "a real launch of verl_1gpu here would still refuse:"
    assert any("no CUDA GPU visible to torch" in line for line in lines)
    for problem, fix in package_problems():
        assert f"  {problem}: {fix}" in lines
    assert "Traceback" not in done.stderr


def test_a_local_preset_is_asked_for_its_sandboxes_only():
    report = machine_readiness(load_preset("local_cpu_smoke"))
    assert all("GPU" not in line and "driver" not in line and "verl" not in line for line in report.lines())
    assert report.notes == ()


@needs_no_gpu
def test_the_dry_run_ends_with_the_report_and_keeps_its_exit_status(tmp_path):
    done = run_script("verl_1gpu", "--dry-run", "--skip-level2", f"trainer.output_dir={tmp_path}")
    assert done.returncode == 0, done.stderr
    assert "a real launch of verl_1gpu here would still refuse:" in done.stderr
    assert "no CUDA GPU visible to torch" in done.stderr
    assert done.stdout.startswith("placement:")  # the YAML alone on stdout


@needs_no_gpu
def test_a_real_launch_refuses_with_exit_2_before_ray_starts(tmp_path):
    done = run_script("verl_1gpu", "--skip-level2", f"trainer.output_dir={tmp_path}")
    assert done.returncode == 2, done.stderr
    assert "a real launch of verl_1gpu here would still refuse:" in done.stderr
    assert "no CUDA GPU visible to torch" in done.stderr
    assert "Traceback" not in done.stderr and "Ray" not in done.stderr
    assert not (tmp_path / "verl_1gpu" / "data").exists()  # the parquet is written after the check, before Ray


@needs_no_gpu
def test_require_ready_raises_the_refusals():
    with pytest.raises(MachineNotReadyError, match="no CUDA GPU visible to torch") as raised:
        require_ready(load_preset("verl_1gpu"))
    assert isinstance(raised.value, TrainingSetupError)
    assert "note:" not in str(raised.value)


def test_a_machine_not_ready_exits_2_and_other_setup_errors_1():
    assert exit_code_for(MachineNotReadyError("no GPU")) == 2
    assert exit_code_for(TrainingSetupError("hydra-core is not installed")) == 1


def test_driver_versions():
    assert driver_too_old("550.54.15") and driver_too_old("575.57.08")
    assert not driver_too_old("580.65.06") and not driver_too_old("590.44.01")
    proc = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@U16)\n"
    assert driver_version_from_proc(proc) == "580.65.06"
    assert driver_version_from_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12\n") == \
        "535.183.01"
    assert driver_version_from_proc("") is None


def test_lock_differences_and_their_summary():
    installed = {"torch": "2.11.0+cu130", "vllm": "0.23.1"}
    pins = {"torch": "2.11.0", "vllm": "0.24.0", "verl": "0.9.1"}
    differences = lock_differences(pins, installed.get)
    assert differences == [LockDifference("vllm", "0.24.0", "0.23.1"), LockDifference("verl", "0.9.1", None)]
    assert same_release("2.11.0+cu130", "2.11.0") and not same_release("2.11.1", "2.11.0")
    summary = summarize(differences, 3, shown=1)
    assert summary == "2 of the lock's 3 packages differ: vllm 0.23.1 (lock 0.24.0) and 1 more"


def test_padding_free_rows_without_them_need_no_attention_check():
    assert gpu_readiness.packed_attention(load_preset("verl_1gpu", ["model.use_remove_padding=false",
                                                                    "model.attn_implementation=sdpa"])) == []


def test_a_refusal_is_one_line_with_its_fix():
    assert Refusal("no GPU", "run on one").line() == "no GPU: run on one"
    assert Refusal("x needs y: install y", "").line() == "x needs y: install y"
    assert ReadinessReport("p").lines() == ["a real launch of p here would refuse nothing"]


def test_the_sandbox_checks_read_the_typed_bwrap_settings(tmp_path, monkeypatch):
    """The export and the bwrap binary are read from ``sandbox.env`` as the episode spec reads it: under the
    ``sandbox_config`` alias too, with ``sandbox.backend`` still ``auto``; a misspelt key is an error naming it
    instead of a silent fallback to ``$TERMINAL_AGENT_IMAGES_DIR``."""
    from terminal_agent.errors import ConfigError
    from terminal_agent.training.launch_environment import bwrap_settings, exported_images_dir

    monkeypatch.setenv("TERMINAL_AGENT_IMAGES_DIR", str(tmp_path / "from-the-environment"))
    preset = load_preset("verl_1gpu", ["sandbox.backend=auto",
                                       f"sandbox.env.sandbox_config.bwrap.images_dir={tmp_path / 'export'}"])
    assert exported_images_dir(preset) == str(tmp_path / "export")
    assert exported_images_dir(load_preset("verl_1gpu")) == str(tmp_path / "from-the-environment")
    missing = tmp_path / "no-bwrap-here"
    preset = load_preset("verl_1gpu", ["sandbox.backend=bwrap", f"sandbox.env.sandbox.bwrap.bwrap_path={missing}"])
    assert bwrap_settings(preset).bwrap_path == str(missing)
    refusals = gpu_readiness.sandbox_backend(preset)
    assert len(refusals) == 1 and str(missing) in refusals[0].problem
    with pytest.raises(ConfigError, match=r"sandbox\.env\.sandbox\.bwrap\.imags_dir"):
        exported_images_dir(load_preset("verl_1gpu", ["sandbox.env.sandbox.bwrap.imags_dir=/x"]))
