"""Probes and fixtures of the training tests.

* verl/rLLM's config schema (level 1) and an interpreter with verl (level 2), for the presets;
* verl's own algorithm functions (``core_algos``) run in a subprocess, and rLLM's ``rl_algo`` loaded from
  its wheel, for the local trainer's algorithms.

Like the Docker probe, a missing piece skips locally with the command that provides it and is an
error under CI (``CI=true``), where ``scripts/setup.sh`` provides them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def verl_reference_dir() -> Path:
    """Where scripts/setup_verl_reference.sh put verl 0.9.1 (same default as the script)."""
    if os.environ.get("VERL_REFERENCE_DIR"):
        return Path(os.environ["VERL_REFERENCE_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ.get("HOME", "/tmp"), ".cache")
    return Path(cache) / "terminal-agent" / "verl-reference-0.9.1"


class VerlReference:
    """Runs batches of cases through verl's ``core_algos`` in one subprocess kept for the session (its
    import takes seconds of CPU: started once, not once per test)."""

    def __init__(self, site: Path, workdir: Path):
        self.site = site
        self.workdir = workdir
        self.calls = 0
        self._process: subprocess.Popen | None = None
        self._stderr_path = workdir / "runner-stderr.txt"

    def _failure(self, what: str) -> RuntimeError:
        return RuntimeError(f"verl reference run failed ({what}):\n{self._stderr_path.read_text()[-4000:]}")

    def run(self, cases: list[dict]) -> list:
        self.calls += 1
        cases_path = self.workdir / f"cases-{self.calls}.pt"
        results_path = self.workdir / f"results-{self.calls}.pt"
        torch.save(cases, cases_path)
        if self._process is None:
            env = {**os.environ, "PYTHONPATH": str(self.site)}
            with open(self._stderr_path, "w") as stderr:
                self._process = subprocess.Popen(
                    [sys.executable, str(HERE / "verl_reference_runner.py"), "--serve"],
                    env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True,
                )
        process = self._process
        try:
            process.stdin.write(f"{cases_path} {results_path}\n")
            process.stdin.flush()
        except BrokenPipeError as exc:  # the runner died (verl failed to import): its stderr says why
            raise self._failure(f"exit {process.wait(timeout=30)}") from exc
        while (line := process.stdout.readline()).strip() != "done":  # other lines: whatever verl prints
            if not line:  # EOF: the runner died on these cases
                raise self._failure(f"exit {process.wait(timeout=30)}")
        return torch.load(results_path, weights_only=False)

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._process = None


@pytest.fixture(scope="session")
def verl_reference(tmp_path_factory) -> VerlReference:
    site = verl_reference_dir() / "site"
    if not (site / "verl" / "trainer" / "ppo" / "core_algos.py").exists():
        message = f"verl 0.9.1 reference not installed at {site}; run: bash scripts/setup_verl_reference.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    reference = VerlReference(site, tmp_path_factory.mktemp("verl-reference"))
    yield reference
    reference.close()


def shared_wheel(prefix: str) -> Path | None:
    """The wheel named ``prefix*.whl`` in the ``shared/wheels`` folder beside the repo (or a parent's)."""
    for parent in [REPO, *REPO.parents]:
        wheels = parent / "shared" / "wheels"
        if wheels.is_dir():
            found = sorted(wheels.glob(f"{prefix}*.whl"))
            if found:
                return found[-1]
    return None


@pytest.fixture(scope="session")
def rllm_rl_algo():
    """rLLM HEAD's ``rllm.trainer.algorithms.rl_algo`` (numpy only), loaded from its wheel."""
    import types
    import zipfile

    wheel = shared_wheel("rllm-0.3.0")
    if wheel is None:
        message = "the rLLM HEAD wheel (shared/wheels/rllm-0.3.0*.whl) is not beside the repo"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    with zipfile.ZipFile(wheel) as zf:
        source = zf.read("rllm/trainer/algorithms/rl_algo.py").decode()
    module = types.ModuleType("rllm_rl_algo_reference")
    exec(compile(source, f"{wheel.name}/rllm/trainer/algorithms/rl_algo.py", "exec"), module.__dict__)
    return module


def _missing(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def verl_schema_sources():
    """Where the verl and rLLM trainer YAML come from (installed packages or the wheels)."""
    from terminal_agent.errors import TrainingSetupError
    from terminal_agent.training.verl import schema as verl_schema

    import importlib.util

    if importlib.util.find_spec("hydra") is None:
        _missing("hydra-core is not installed (pip install -e '.[test]')")
    try:
        return verl_schema.verl_config_source(), verl_schema.rllm_config_source()
    except TrainingSetupError as exc:
        _missing(f"{exc} (scripts/setup.sh fetches both wheels)")


@pytest.fixture(scope="session")
def verl_python(verl_schema_sources):
    """An interpreter where ``verl.utils.config`` imports: this one, TERMINAL_AGENT_VERL_PYTHON or the CI venv."""
    from terminal_agent.training.verl import schema as verl_schema

    if verl_schema.verl_importable():
        return None  # in-process
    candidate = os.environ.get("TERMINAL_AGENT_VERL_PYTHON") or verl_schema.default_verl_python()
    if candidate and os.path.exists(candidate):
        return candidate  # whether verl imports there is the test's first answer
    _missing("no interpreter imports verl (bash scripts/setup_verl_check_venv.sh builds one)")
