"""Probes of the training tests: verl/rLLM's config schema (level 1) and an interpreter with verl (level 2).

Like the Docker probe, a missing piece skips locally with the command that provides it and is an
error under CI (``CI=true``), where ``scripts/setup.sh`` provides both.
"""

from __future__ import annotations

import os

import pytest


def _missing(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def verl_schema_sources():
    """Where the verl and rLLM trainer YAML come from (installed packages or the wheels)."""
    from terminal_agent.errors import TrainingSetupError
    from terminal_agent.training import verl_schema

    try:
        import hydra  # noqa: F401
    except ImportError:
        _missing("hydra-core is not installed (pip install -e '.[test]')")
    try:
        return verl_schema.verl_config_source(), verl_schema.rllm_config_source()
    except TrainingSetupError as exc:
        _missing(f"{exc} (scripts/setup.sh fetches both wheels)")


@pytest.fixture(scope="session")
def verl_python(verl_schema_sources):
    """An interpreter where ``verl.utils.config`` imports: this one, TERMINAL_AGENT_VERL_PYTHON or the CI venv."""
    from terminal_agent.training import verl_schema

    if verl_schema.verl_importable():
        return None  # in-process
    candidate = os.environ.get("TERMINAL_AGENT_VERL_PYTHON") or verl_schema.default_verl_python()
    if candidate and verl_schema.python_has_verl(candidate):
        return candidate
    _missing("no interpreter imports verl (bash scripts/setup_verl_check_venv.sh builds one)")
