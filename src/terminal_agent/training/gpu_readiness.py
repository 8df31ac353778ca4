"""What a real GPU launch of a preset would still refuse on this machine, each refusal one line with its fix.

    report = machine_readiness(load_preset("verl_1gpu"))
    report.refusals        # (Refusal("no NVIDIA driver (...)", "run on a machine with ..."), ...)
    report.lines()         # what ``launch_training.py PRESET --check-machine`` prints (exit 2 unless ready)
    require_ready(preset)  # MachineNotReadyError listing them: the verl launch calls it before Ray starts

The checks, in this order (:data:`READINESS_CHECKS`, one signature: preset -> refusals): the NVIDIA driver and the
GPUs torch sees (a CUDA build of torch, ``cluster.gpus_per_node`` GPUs; the driver is looked at only when torch
sees too few, to say why), the GPU packages at their pins (:func:`~.verl.machine_checks.package_problems`: verl,
Ray, vLLM, tensordict, rLLM), padding-free attention (``verl.attention_checks.packed_attention_report`` where that
module exists), and a sandbox backend this machine can run. The GPU checks apply to a backend with verl's GPU rules
(``gpu_geometry``); a local preset is asked only for its sandboxes.

Packages that differ from ``requirements/gpu-py312.lock`` are reported as a note, not a refusal: a GPU node's
runtime may take some packages from its image (training_scripts/device_run/verl_runtime.json), and the pins a run
depends on are refused above. The fix of nearly everything is ``bash scripts/setup.sh --gpu`` (docs/setup.md).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from terminal_agent.errors import MachineNotReadyError
from terminal_agent.training.gpu_lock import LOCK_PATH, lock_differences, read_lock, summarize
from terminal_agent.training.preset_config import TrainingPreset

#: The oldest driver branch CUDA 13.x runs on: NVIDIA's minor-version compatibility table ("CUDA 13.x: >= 580",
#: docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html, Table 1); the driver packaged with
#: CUDA 13.0 GA is 580.65.06. torch 2.11.0's default wheel (the lock's) is built for CUDA 13.0, and vLLM 0.24.0
#: is built against that torch.
MINIMUM_DRIVER = (580,)
SETUP_GPU = "bash scripts/setup.sh --gpu"
_PROC_DRIVER_VERSION = Path("/proc/driver/nvidia/version")


@dataclass(frozen=True)
class Refusal:
    """One thing a real launch here refuses."""

    problem: str
    """What is missing or wrong, as found (``no NVIDIA driver (nvidia-smi is not on PATH)``)."""
    fix: str
    """The command or change that fixes it; empty where ``problem`` names it already."""

    def line(self) -> str:
        return f"{self.problem}: {self.fix}" if self.fix else self.problem


@dataclass(frozen=True)
class ReadinessReport:
    """The refusals of a real launch of ``preset`` here, and notes that refuse nothing."""

    preset: str
    refusals: tuple[Refusal, ...] = ()
    notes: tuple[str, ...] = ()
    """Things worth knowing that a launch does not refuse (packages that differ from the GPU lock)."""

    @property
    def ready(self) -> bool:
        return not self.refusals

    def lines(self) -> list[str]:
        """The report as printed: a heading, one line per refusal, then the notes."""
        if self.ready:
            lines = [f"a real launch of {self.preset} here would refuse nothing"]
        else:
            lines = [f"a real launch of {self.preset} here would still refuse:"]
            lines += [f"  {refusal.line()}" for refusal in self.refusals]
        lines += [f"note: {note}" for note in self.notes]
        return lines


# --- the driver and the GPUs ---------------------------------------------------------------------
@dataclass(frozen=True)
class TorchFacts:
    """What torch says about CUDA here."""

    version: str | None
    """torch's version; None: not installed."""
    cuda: str | None
    """The CUDA version torch was built for; None: a CPU build."""
    gpus: int
    """CUDA devices torch can use."""


def torch_facts() -> TorchFacts:
    try:
        import torch
    except ImportError:
        return TorchFacts(version=None, cuda=None, gpus=0)
    cuda: str | None = torch.version.cuda
    with warnings.catch_warnings():  # a CUDA build without a driver warns on the first query; the report says so
        warnings.simplefilter("ignore")
        gpus = torch.cuda.device_count() if cuda and torch.cuda.is_available() else 0
    return TorchFacts(version=str(torch.__version__), cuda=cuda, gpus=gpus)


def nvidia_driver_version() -> str | None:
    """The loaded NVIDIA driver's version (``nvidia-smi``, else ``/proc/driver/nvidia/version``), or None."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            done = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                                  text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            done = None
        if done is not None and done.returncode == 0 and done.stdout.split():
            return done.stdout.split()[0]
    try:
        return driver_version_from_proc(_PROC_DRIVER_VERSION.read_text())
    except OSError:
        return None


def driver_version_from_proc(text: str) -> str | None:
    """The version in ``/proc/driver/nvidia/version`` ("NVRM version: NVIDIA UNIX [Open] Kernel Module [for
    x86_64]  580.65.06  Release Build ..."), or None."""
    found = re.search(r"Kernel Module.*?\s(\d{3,}\.\d+(?:\.\d+)?)\s", text)
    return found.group(1) if found else None


def driver_too_old(version: str) -> bool:
    parts = tuple(int(part) for part in re.findall(r"\d+", version))
    return parts < MINIMUM_DRIVER


def driver_and_gpus(preset: TrainingPreset) -> list[Refusal]:
    """A CUDA build of torch that sees ``cluster.gpus_per_node`` GPUs; where it sees fewer, the driver says why."""
    refusals = []
    facts = torch_facts()
    if facts.version is None:
        refusals.append(Refusal("torch is not installed", f"{SETUP_GPU} (the lock's torch 2.11.0, a CUDA 13 build)"))
    elif facts.cuda is None:
        refusals.append(Refusal(f"torch {facts.version} is a CPU build (torch.version.cuda is None)",
                                f"{SETUP_GPU}, then run with its venv's python (.venv-gpu/bin/python): the lock's "
                                "torch 2.11.0 is the CUDA 13 build"))
    needed = preset.cluster.gpus_per_node
    if facts.gpus >= needed:
        return refusals  # the driver is new enough for what torch was built for
    driver = nvidia_driver_version()
    minimum = ".".join(map(str, MINIMUM_DRIVER))
    if driver is None:
        refusals.append(Refusal("no NVIDIA driver (nvidia-smi is not on PATH and /proc/driver/nvidia/version is "
                                "absent)", f"run on a machine with NVIDIA GPUs and driver >= {minimum} (CUDA 13)"))
    elif driver_too_old(driver):
        refusals.append(Refusal(f"NVIDIA driver {driver} is too old for CUDA 13 (torch 2.11.0+cu130, vLLM 0.24.0)",
                                f"install driver >= {minimum} (NVIDIA's R{minimum} branch or newer)"))
    seen = "no CUDA GPU visible to torch" if facts.gpus == 0 else f"torch sees {facts.gpus} CUDA GPU(s)"
    if driver is None:
        fix = f"run on a machine with {needed} NVIDIA GPU(s)"
    elif facts.cuda is None:
        fix = "install the CUDA build of torch (above)"
    else:
        fix = "check nvidia-smi and CUDA_VISIBLE_DEVICES, or lower cluster.gpus_per_node"
    refusals.append(Refusal(f"{seen} ({preset.name} needs cluster.gpus_per_node={needed})", fix))
    return refusals


# --- packages ------------------------------------------------------------------------------------
def gpu_packages(preset: TrainingPreset) -> list[Refusal]:
    """verl, Ray, vLLM, tensordict and rLLM at the pins of the GPU lock (machine_checks.package_problems)."""
    from terminal_agent.training.verl.machine_checks import package_problems

    return [Refusal(problem, fix) for problem, fix in package_problems()]


def lock_note(lock: Path = LOCK_PATH) -> str | None:
    """One line on the lock's packages that are not installed at their versions, or None (or no lock here)."""
    if not lock.is_file():
        return None
    pins = read_lock(lock)
    differences = lock_differences(pins)
    if not differences:
        return None
    return f"{summarize(differences, len(pins))} ({lock.name}; {SETUP_GPU} installs it)"


# --- padding-free attention ----------------------------------------------------------------------
def packed_attention(preset: TrainingPreset) -> list[Refusal]:
    """What :func:`~terminal_agent.training.verl.attention_checks.packed_attention_report` refuses for the preset's
    attention and padding-free rows (its line names the fix itself)."""
    from terminal_agent.training.verl.attention_checks import packed_attention_report
    from terminal_agent.training.verl.preset_sections import verl_preset

    report = packed_attention_report(verl_preset(preset))
    return [Refusal(report, "")] if report else []


# --- sandboxes -----------------------------------------------------------------------------------
def sandbox_backend(preset: TrainingPreset) -> list[Refusal]:
    """The preset's sandbox backend can run here: docker (a daemon answers), bwrap (bubblewrap, root, an image
    export) or auto (either). ray: its hosts are other nodes, checked after ``ray.init``."""
    from terminal_agent.errors import SandboxUnavailableError
    from terminal_agent.sandbox.bwrap.sandbox import find_bwrap
    from terminal_agent.training.launch_environment import bwrap_settings, exported_images_dir
    from terminal_agent.training.launcher import AUTO_SANDBOX, docker_daemon_answers

    backend = preset.sandbox.backend
    if backend not in ("docker", "bwrap", AUTO_SANDBOX):
        return []
    if backend != "bwrap" and docker_daemon_answers():
        return []
    start_docker = "start Docker (bash scripts/ensure_docker.sh, as root)"
    if backend == "docker":
        return [Refusal("sandbox.backend docker: no Docker daemon answers",
                        f"{start_docker}, or sandbox.backend=bwrap with an image export (docs/bwrap.md)")]
    bwrap_path = bwrap_settings(preset).bwrap_path
    where = "sandbox.backend bwrap" if backend == "bwrap" else "no Docker daemon answers and the bwrap backend"
    try:
        find_bwrap(bwrap_path)
    except SandboxUnavailableError as exc:
        install = f"install bubblewrap (apt-get install -y bubblewrap, as root; {SETUP_GPU} does it)"
        fix = f"{start_docker}, or {install}" if backend == AUTO_SANDBOX else install
        return [Refusal(f"no sandbox backend: {where} cannot run ({exc})", fix)]
    images_dir = exported_images_dir(preset)
    if not images_dir or not (Path(images_dir).expanduser() / "manifest.json").is_file():
        found = f"{images_dir} has no manifest.json" if images_dir else "TERMINAL_AGENT_IMAGES_DIR is not set"
        return [Refusal(f"{where} needs an image export ({found})",
                        "where Docker runs: terminal-agent images export dataset/latest_verified.csv tasks/ -o "
                        "exports/; here: export TERMINAL_AGENT_IMAGES_DIR=/path/to/exports (docs/bwrap.md)")]
    return []


#: The checks of a report, in order; each takes the preset and returns its refusals.
READINESS_CHECKS: tuple[Callable[[TrainingPreset], list[Refusal]], ...] = (
    driver_and_gpus, gpu_packages, packed_attention, sandbox_backend,
)
#: The checks that apply only to a backend with verl's GPU rules.
GPU_PATH_CHECKS = frozenset({driver_and_gpus, gpu_packages, packed_attention})


def machine_readiness(preset: TrainingPreset) -> ReadinessReport:
    """Every refusal of a real launch of ``preset`` here (nothing is started; torch is imported)."""
    from terminal_agent.training.trainer_backends import get_trainer_backend

    gpu_path = get_trainer_backend(preset.backend).gpu_geometry
    refusals: list[Refusal] = []
    for check in READINESS_CHECKS:
        if gpu_path or check not in GPU_PATH_CHECKS:
            refusals.extend(check(preset))
    note = lock_note() if gpu_path else None
    return ReadinessReport(preset=preset.name, refusals=tuple(refusals), notes=(note,) if note else ())


def require_ready(preset: TrainingPreset) -> ReadinessReport:
    """:func:`machine_readiness`, raising :class:`MachineNotReadyError` (its lines) when anything is refused."""
    report = machine_readiness(preset)
    if not report.ready:
        raise MachineNotReadyError("\n".join(report.lines()[: len(report.refusals) + 1]))
    return report


__all__ = [
    "GPU_PATH_CHECKS", "MINIMUM_DRIVER", "READINESS_CHECKS", "ReadinessReport", "Refusal",
    "TorchFacts", "driver_and_gpus", "driver_too_old", "driver_version_from_proc", "gpu_packages", "lock_note",
    "machine_readiness", "nvidia_driver_version", "packed_attention", "require_ready", "sandbox_backend",
    "torch_facts",
]
