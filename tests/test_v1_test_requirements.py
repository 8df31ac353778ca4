"""Test dependencies named only in a terminal-bench v1 ``run-tests.sh``: one verdict read directly and through Harbor.

The real sparql-university task installs ``rdflib`` in run-tests.sh (``uv pip install rdflib==7.1.4``) and its tests
``import rdflib``. Read directly (weighted pytest on the grader's pytest bundle) the reader records the requirement
and the grader provides its wheels offline, the way the Harbor mode's verifier runtime provides them to the migrated
``tests/test.sh``. The task here stands for it with ``tabulate==0.9.0`` (a small pure-Python wheel that is neither in
the image nor in the pytest bundle), fetched by the host's runtime (its wheelhouse, cache or registry), as the Harbor
mode's own tests fetch theirs. Where no wheel can be had, both paths leave the episode unscored (never 0).
"""

from __future__ import annotations

import os
import textwrap

import pytest

from harbor_reference import harbor
from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.env import DockerIsolatedEnv, EnvConfig
from terminal_agent.errors import TaskFormatError
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.grading import GradingConfig
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.verifier_runtime import ToolUnavailable, fetch_tool, parse_requirement
from terminal_agent.rollout.episode import run_episode
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.task_quality.validation import noop_replies, oracle_replies
from terminal_agent.tasks.harbor.format import read_harbor_task
from terminal_agent.tasks.model import GradingMode, Task
from terminal_agent.tasks.terminal_bench.format import read_tb_task
from terminal_agent.tasks.terminal_bench.test_requirements import TEST_REQUIREMENTS_METADATA_KEY, read_test_requirements
from test_v1_harbor_verdicts import INSTALL_UV, write_v1_task

REQUIREMENT = "tabulate==0.9.0"
TESTS = textwrap.dedent(
    """\
    from pathlib import Path

    import tabulate


    def test_total_value():
        assert Path("/app/total.txt").read_text().strip() == "42"


    def test_total_renders_as_a_table():
        assert tabulate.__version__ == "0.9.0"
        table = tabulate.tabulate([["total", int(Path("/app/total.txt").read_text())]], tablefmt="plain")
        assert table.split() == ["total", "42"]
    """
)
RUN_TESTS = INSTALL_UV + (
    "uv venv .tbench-testing\nsource .tbench-testing/bin/activate\n"
    f"uv pip install pytest==8.4.1 {REQUIREMENT}\nuv run pytest $TEST_DIR/test_outputs.py -rA\n"
)


def episode(task: Task, replies: list[str], grading: GradingConfig | None = None):
    config = EnvConfig(max_steps=len(replies) + 1, sandbox=SandboxConfig(), grading=grading or GradingConfig())
    return run_episode(DockerIsolatedEnv(task, config), TerminalBenchAgent(), ScriptedModelClient(replies),
                       max_steps=len(replies) + 1)


# --- the reader ----------------------------------------------------------------------------------
def test_the_reader_records_each_install_with_its_pin():
    script = textwrap.dedent(
        """\
        #!/bin/bash
        pip install pytest >/dev/null 2>&1 || true
        uv pip install --system pytest==8.2.1 \\
            rdflib==7.1.4   # the tests parse turtle
        uv add --dev pytest-asyncio@0.23.0 'numpy>=2'
        python3 -m pip install -q -i https://mirror.invalid/simple -r $TEST_DIR/requirements.txt
        uv run pytest $TEST_DIR/test_outputs.py  # runs, installs nothing
        """
    )
    found = read_test_requirements(script, {"requirements.txt": "six==1.16.0  # pinned\n\nattrs\n"}, "t")
    assert found == ["pytest", "pytest==8.2.1", "rdflib==7.1.4", "pytest-asyncio==0.23.0", "numpy>=2",
                     "six==1.16.0", "attrs"]


@pytest.mark.parametrize(
    "line, says",
    [
        ("pip install .", "path or URL"),
        ("uv pip install -e /app", "editable"),
        ("pip install $PACKAGE", "shell variable"),
        ("uv pip install git+https://example.invalid/x.git", "path or URL"),
        ("pip install -r requirements.txt", "not one of the task's test files"),
        ("uv add 'not a name'", "not a requirement"),
        ("pip install 'unclosed", "cannot be split"),
    ],
)
def test_what_is_not_a_named_package_is_refused_naming_the_line(line, says):
    with pytest.raises(TaskFormatError, match=says) as info:
        read_test_requirements(f"#!/bin/bash\nset -e\n{line}\n", {}, "some-task")
    assert info.value.field == "run-tests.sh" and info.value.location == "some-task"
    assert "line 3" in str(info.value) and line.split()[0] in str(info.value)


def test_a_v1_task_records_what_its_run_tests_installs(tmp_path):
    task_dir = write_v1_task(tmp_path, "tabulate-total", RUN_TESTS)
    task = read_tb_task(task_dir)
    assert task.metadata[TEST_REQUIREMENTS_METADATA_KEY] == ["pytest==8.4.1", REQUIREMENT]
    (task_dir / "run-tests.sh").write_text(RUN_TESTS.replace(REQUIREMENT, "./vendored-lib"))
    with pytest.raises(TaskFormatError, match=r"line 8: .*vendored-lib") as info:
        read_tb_task(task_dir)
    assert info.value.field == "run-tests.sh"


def test_a_harbor_export_installs_the_requirements_beside_pytest(tmp_path):
    """Written to Harbor (graded by weighted pytest there too), test.sh puts the tests' own requirements into its
    venv beside the pinned pytest, so that stock Harbor runs the tests with them (syntax checked with ``bash -n``;
    the install itself needs a registry, which the verifier phase's network gives under Harbor)."""
    import subprocess

    from terminal_agent.tasks.harbor.format import PYTEST_REQUIREMENT, write_harbor_task

    task = read_tb_task(write_v1_task(tmp_path / "v1", "tabulate-total", RUN_TESTS))
    script = (write_harbor_task(task, tmp_path / "harbor") / "tests" / "test.sh").read_text()
    assert f"pip install -q --disable-pip-version-check {PYTEST_REQUIREMENT} {REQUIREMENT}\n" in script
    assert "pytest==8.4.1 pytest==8.4.1" not in script  # the task's own pytest pin is the writer's
    check = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert read_harbor_task(tmp_path / "harbor" / "tabulate-total").metadata[TEST_REQUIREMENTS_METADATA_KEY] == [
        "pytest==8.4.1", REQUIREMENT]


# --- one verdict both ways, in Docker ------------------------------------------------------------
def _require_wheel() -> None:
    try:
        fetch_tool(parse_requirement(REQUIREMENT, "pip install"), HarborGradingConfig())
    except ToolUnavailable as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the host cannot fetch {REQUIREMENT}: {exc}")


@pytest.fixture(scope="module")
def both_readings(tmp_path_factory) -> tuple[Task, Task]:
    _require_wheel()
    root = tmp_path_factory.mktemp("v1-requirements")
    task_dir = write_v1_task(root / "v1", "tabulate-total", RUN_TESTS)
    (task_dir / "tests" / "test_outputs.py").write_text(TESTS)
    run = harbor("task", "migrate", "-i", str(root / "v1"), "-o", str(root / "harbor"))
    assert run.returncode == 0, run.stdout + run.stderr
    return read_tb_task(task_dir), read_harbor_task(root / "harbor" / "tabulate-total")


@pytest.mark.docker
def test_oracle_and_no_op_get_one_verdict_both_ways(both_readings):
    direct, migrated = both_readings
    assert direct.verifier.mode is GradingMode.WEIGHTED_PYTEST and migrated.verifier.mode is GradingMode.HARBOR
    for path, task in (("direct", direct), ("harbor", migrated)):
        oracle = episode(task, oracle_replies(task))
        noop = episode(task, noop_replies())
        assert oracle.scored and oracle.reward == pytest.approx(1.0), (path, oracle.error, oracle.grade)
        assert noop.scored and noop.reward == 0.0, (path, noop.error, noop.grade)
    # the control: without the recorded requirement the image has no tabulate and the same oracle fails the tests
    bare = direct.model_copy(update={"metadata": {k: v for k, v in direct.metadata.items()
                                                  if k != TEST_REQUIREMENTS_METADATA_KEY}})
    oracle = episode(bare, oracle_replies(bare))
    assert oracle.scored and oracle.reward == 0.0, (oracle.error, oracle.grade)


@pytest.mark.docker
def test_no_wheel_to_be_had_is_an_infrastructure_error_both_ways(both_readings, tmp_path):
    """A host with an empty cache, no wheelhouse and no registry cannot provide tabulate: the oracle episode is not
    scored (an infrastructure error naming it), on either path."""
    nowhere = HarborGradingConfig(network="offline", use_registry=False, tool_cache_dir=str(tmp_path / "empty"))
    for path, task in zip(("direct", "harbor"), both_readings):
        oracle = episode(task, oracle_replies(task), GradingConfig(harbor=nowhere))
        assert not oracle.scored, (path, oracle.reward, oracle.grade)
        assert "tabulate" in (oracle.error or ""), (path, oracle.error)
