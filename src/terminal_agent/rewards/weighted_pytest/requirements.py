"""The test requirements of a weighted pytest task, provided offline the way the Harbor mode provides them.

A terminal-bench v1 task's ``run-tests.sh`` installs what its tests import (``uv pip install rdflib==7.1.4``); the
reader records it in ``Task.metadata["tb_test_requirements"]`` (``tasks/terminal_bench/test_requirements.py``).
Weighted pytest runs the tests on the grader's pytest bundle, never through run-tests.sh, so the grader hands the
verifier the same offline runtime the Harbor mode's ``uv`` stand-in serves (``rewards/verifier_runtime.py``): each
requirement's wheels fetched once by the host (the wheelhouse, then the registry it reaches) for the python the tests
run under (asked of the sandbox), cached by requirement and that python, pure ones shipped as they are, compiled
ones unpacked. The runner (``assets/verifier_runner.py``) puts them on ``sys.path`` after the bundle and loads their
pytest plugins with ``-p``. A requirement the host could not provide,
and the image does not have either, stops the grading before pytest runs: an infrastructure error, never a 0 for the
model.
"""

from __future__ import annotations

import json
from typing import Any

from terminal_agent.errors import GradingError
from terminal_agent.interfaces import GradingSandbox
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.target_python import probe_target_python
from terminal_agent.rewards.verifier_runtime import (
    Requirement,
    RuntimePlan,
    asset,
    host_pytest_version,
    needs_wheels,
    parse_requirement,
    plan_runtime,
    unpacked_wheel,
)
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.terminal_bench.test_requirements import TEST_REQUIREMENTS_METADATA_KEY

NOT_FOR_THE_TESTS = frozenset({"pip", "uv"})
"""Installers a run-tests.sh may install for itself: nothing the tests import, so nothing is fetched for them."""

RUNTIME_DIR = "runtime"
"""The runtime's folder inside the verifier directory (manifest, the stand-in module whose wheel checks the runner
uses, the wheels)."""


def task_test_requirements(task: Task) -> list[Requirement]:
    """The requirements ``task``'s tests need beyond pytest (none for most tasks).

    Raises :class:`GradingError` when the metadata holds something that is not a list of requirement strings.
    """
    raw = task.metadata.get(TEST_REQUIREMENTS_METADATA_KEY)
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(spec, str) for spec in raw):
        raise GradingError(f"metadata {TEST_REQUIREMENTS_METADATA_KEY!r} must be a list of requirement strings, "
                           f"not {raw!r}")
    found: list[Requirement] = []
    for spec in raw:
        requirement = parse_requirement(spec, "run-tests.sh")
        if requirement is None:
            raise GradingError(f"metadata {TEST_REQUIREMENTS_METADATA_KEY!r}: {spec!r} is not a package requirement")
        if requirement.name not in NOT_FOR_THE_TESTS:
            found.append(requirement)
    return found


def requirement_entries(task: Task, rel: str, interpreter: str, config: HarborGradingConfig,
                        sandbox: GradingSandbox | None = None
                        ) -> tuple[list[tuple[str, bytes | str | None, int]], RuntimePlan | None]:
    """Tar entries of ``rel/runtime/`` for ``task``'s test requirements (none, and no plan, when it has none).

    ``sandbox``: where ``interpreter`` runs the tests, asked which python it is when a requirement comes as wheels
    (:func:`~terminal_agent.rewards.target_python.probe_target_python`); None: wheels for the host's python.
    Raises ``SandboxError`` / :class:`GradingError` as that probe does.
    """
    requirements = task_test_requirements(task)
    if not requirements:
        return [], None
    target = probe_target_python(sandbox, interpreter) if sandbox is not None and needs_wheels(requirements) else None
    plan = plan_runtime(requirements, config, target)
    if not plan.wheels and not plan.unavailable:  # pytest alone (most v1 tasks): the bundle is all the tests need
        return [], plan
    root = f"{rel}/{RUNTIME_DIR}"
    manifest: dict[str, Any] = plan.manifest(interpreter, host_pytest_version())
    entries: list[tuple[str, bytes | str | None, int]] = [
        (root, None, 0o755),
        (f"{root}/wheels", None, 0o755),
        (f"{root}/uv_standin.py", asset("uv_standin.py"), 0o644),
        (f"{root}/manifest.json", json.dumps(manifest).encode(), 0o644),
    ]
    for name, wheel in sorted(plan.wheels.items()):
        if wheel.compiled:  # extension modules cannot be imported from a zip
            entries += unpacked_wheel(f"{root}/wheels/{name}.d", wheel.data, name)
        else:
            entries.append((f"{root}/wheels/{name}", wheel.data, 0o644))
    return entries, plan


def missing_requirements_error(missing: dict[str, str]) -> GradingError:
    """The infrastructure error of a grading whose tests' requirements neither the host nor the image provides."""
    listed = "; ".join(f"{name}: {why}" for name, why in sorted(missing.items()))
    return GradingError(f"the tests need what neither the offline verifier runtime nor the image provides ({listed}); "
                        "not scored: put the wheels in grading.harbor.wheelhouse or let the host reach a registry")
