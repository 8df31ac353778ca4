"""Shared fixtures and the layer probes.

Layers are opt-out by capability, not opt-in: a test marked ``docker`` runs whenever a daemon
answers. Locally a missing daemon skips with a reason; under CI (``CI=true``) it is an error,
because CI must run every layer the machine can run.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

# One OpenMP thread in each parallel worker and the processes it starts (set before torch loads; children
# inherit it): with one thread per core in each of 3 workers on 2 cores, torch's threads spin-wait on each
# other. The same CPU-bound test (test_nonfinite_gradients -k packed_logprobs, 2026-12-04, busy cores) used
# 121 s of CPU with the default threads and 63-77 s with one. The serial phase (one process) keeps the default.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)

from terminal_agent.compat.rllm import RLLM_AVAILABLE  # noqa: E402

# The rLLM conformance suite runs in its own venvs (scripts/test.sh builds them from the wheels).
collect_ignore = [] if RLLM_AVAILABLE else ["rllm_conformance"]


def _docker_client():
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
        return client
    except Exception as exc:  # noqa: BLE001 - any failure means "no daemon"
        return exc


@pytest.fixture(scope="session")
def docker_client():
    client = _docker_client()
    if isinstance(client, Exception):
        message = f"no Docker daemon answers ({client}); run scripts/setup.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return client


# The files that take longest, longest first (per-file sums of `--durations=0`, each file alone with one torch
# thread, 2026-12-04 evening, after the end-to-end runs were shrunk and shared; the files not re-measured keep their
# earlier rank): the end-to-end training and eval runs on the embedded model, then the model and grading suites.
# scripts/test.sh hands whole files to its workers in collection order (`--dist loadfile --no-loadscope-reorder`):
# started first, these no longer run alone at the end of the parallel phase while the other workers sit idle.
# Every other file keeps its place after them; the order inside a file never changes.
LONGEST_FILES_FIRST = [
    "tests/training/test_local_bwrap.py",
    "tests/training/test_local_resume.py",
    "tests/training/test_seed_experiment.py",
    "tests/test_continuous_batching.py",
    "tests/training/test_local_training_step.py",
    "tests/test_eval_end_to_end.py",
    "tests/test_grading_harbor_adversarial.py",
    "tests/test_embedded_model.py",
    "tests/test_judge_models.py",
    "tests/test_batched_generation.py",
    "tests/training/test_local_algorithms.py",
    "tests/test_grading_harbor.py",
    "tests/test_adapter_eval_and_export.py",
    "tests/test_grading_service_tasks.py",
    "tests/training/test_raw_overrides.py",
    "tests/training/test_presets.py",
    "tests/test_grading_adversarial.py",
    "tests/training/test_verl_checkpoint_export.py",
    "tests/training/test_streamed_update.py",
    "tests/training/test_nonfinite_gradients.py",
]


def _file_rank(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return LONGEST_FILES_FIRST.index(path) if path in LONGEST_FILES_FIRST else len(LONGEST_FILES_FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_file_rank)  # stable: the order inside each file, and of the files not named, is kept
    # every test marked docker gets the probe, even if it does not ask for the fixture
    for item in items:
        if item.get_closest_marker("docker") and "docker_client" not in item.fixturenames:
            item.fixturenames.append("docker_client")
        if item.get_closest_marker("gpu"):
            try:
                import torch

                has_gpu = torch.cuda.is_available()
            except ImportError:
                has_gpu = False
            if not has_gpu:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU (run on the lent device)"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def served_model():
    """``transformers serve`` on the converted embedded model; yields (litellm model name, api_base)."""
    pytest.importorskip("fastapi", reason="transformers serve needs fastapi + uvicorn (transformers[serving])")
    from terminal_agent.models.embedded import ensure_embedded_model_cached

    model_dir = ensure_embedded_model_cached()
    port = free_port()
    cli = Path(sys.executable).with_name("transformers")
    command = [str(cli) if cli.exists() else "transformers", "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"})  # 1 thread: ~7x faster on busy cores
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"transformers serve exited: {process.stderr.read().decode()[-2000:]}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("transformers serve did not answer /health within 120 s")
                time.sleep(0.5)
        yield f"openai/{model_dir}", f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
