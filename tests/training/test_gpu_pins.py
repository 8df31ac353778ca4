"""The GPU path's versions live in four places that must agree: pyproject.toml's ``model`` and ``train`` extras, the
lock generated from them (requirements/gpu-py312.lock, scripts/lock_gpu.sh), the pins a real launch checks
(machine_checks.TRAIN_PINS) and the GPU node runtime's manifest (training_scripts/device_run/verl_runtime.json,
read as data). A change to one without the others fails here."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from terminal_agent.training.gpu_lock import LOCK_PATH, canonical_name, read_lock
from terminal_agent.training.verl.machine_checks import RLLM_COMMIT, RLLM_VERSION, TRAIN_PINS

REPO = Path(__file__).resolve().parents[2]
RUNTIME_MANIFEST = REPO / "training_scripts" / "device_run" / "verl_runtime.json"


@pytest.fixture(scope="module")
def lock() -> dict[str, str]:
    return read_lock(LOCK_PATH)


def extra(name: str) -> list[Requirement]:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    return [Requirement(line) for line in pyproject["project"]["optional-dependencies"][name]]


def test_the_lock_is_read_whole(lock):
    assert LOCK_PATH == REPO / "requirements" / "gpu-py312.lock"
    entries = [line for line in LOCK_PATH.read_text().splitlines() if re.match(r"[A-Za-z0-9]", line)]
    assert len(lock) == len(entries) > 200
    assert lock["torch"] == "2.11.0" and lock["vllm"] == "0.24.0" and lock["verl"] == "0.9.1"
    assert all(canonical_name(name) == canonicalize_name(name) == name for name in lock)


@pytest.mark.parametrize("extra_name", ["train", "model"])
def test_every_pin_of_the_extra_is_satisfied_by_the_lock(lock, extra_name):
    requirements = extra(extra_name)
    assert requirements
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{requirement} of the {extra_name} extra is not in the lock: bash scripts/lock_gpu.sh"
        assert requirement.specifier.contains(lock[name], prereleases=True), (
            f"{requirement} of the {extra_name} extra; the lock has {name}=={lock[name]}: bash scripts/lock_gpu.sh")


def test_the_train_extra_names_the_pins_exactly():
    pinned = {canonicalize_name(r.name): str(r.specifier) for r in extra("train")}
    assert pinned["verl"] == "==0.9.1" and pinned["ray"] == "==2.60.0" and pinned["tensordict"] == "==0.10.0"
    assert pinned["hydra-core"] == ">=1.3"


def test_the_launch_checks_the_lock_versions(lock):
    assert TRAIN_PINS == {name: lock[name] for name in TRAIN_PINS}
    assert {"verl", "ray", "vllm", "tensordict"} <= set(TRAIN_PINS)


def test_the_node_runtime_requires_the_lock_versions(lock):
    manifest = json.loads(RUNTIME_MANIFEST.read_text())
    pins = manifest["required_pins"]
    assert pins == {name: lock[canonical_name(name)] for name in pins}
    assert pins == TRAIN_PINS
    if "lock_sha256" in manifest:  # the runtime built from the lock records which lock
        assert manifest["lock_sha256"] == hashlib.sha256(LOCK_PATH.read_bytes()).hexdigest(), (
            "verl_runtime.json was built from another lock: rebuild it (training_scripts/device_run/verl_runtime.py)")


def test_the_gpu_setup_installs_the_rllm_the_launch_checks():
    script = (REPO / "scripts" / "setup_gpu.sh").read_text()
    assert f"RLLM_COMMIT={RLLM_COMMIT}\n" in script and f"RLLM_VERSION={RLLM_VERSION}\n" in script
    assert "LOCK=${GPU_LOCK:-requirements/gpu-py312.lock}\n" in script
