"""Same task, same verdict: a terminal-bench v1 task read directly (weighted pytest) and read through stock Harbor's
own ``harbor task migrate`` (Harbor mode: the migrated ``tests/test.sh`` writes 1 or 0) gets the same oracle and
no-op verdicts.

The tasks are small v1-style tasks written here, one per kind of ``run-tests.sh`` that used to split the verdicts
of the terminal-bench v1 sample (docs/tasks.md, "terminal-bench v1 read directly and through Harbor"):

* ``venv-python-m-pytest``: ``uv venv .tbench-testing``, ``source .tbench-testing/bin/activate``, ``uv pip install
  pytest``, then ``python -m pytest`` (an oracle scored 0 through Harbor with no failing test named: the offline
  stand-in made no venv and ``python -m pytest`` ran the image's python, which has no pytest);
* ``uv-init``: ``uv init``, ``uv add pytest``, ``uv run pytest`` (unscored through Harbor: the stand-in refused
  ``uv init``);
* ``uv-run-pytest``: the usual v1 script (``uv venv``, ``uv pip install``, ``uv run pytest``), the control.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harbor_reference import harbor, harbor_task_configs
from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.env import DockerIsolatedEnv, EnvConfig
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.grading import GradingConfig
from terminal_agent.rollout.episode import run_episode
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.task_quality.validation import noop_replies, oracle_replies
from terminal_agent.tasks.harbor.format import read_harbor_task
from terminal_agent.tasks.model import GradingMode, Task
from terminal_agent.tasks.terminal_bench.format import read_tb_task

pytestmark = [pytest.mark.docker]

TASK_YAML = textwrap.dedent(
    """\
    instruction: |-
      /app/prices.csv lists item,price. Write the total of all prices, as an integer, to /app/total.txt.
    author_name: terminal-agent tests
    author_email: tests@example.invalid
    difficulty: easy
    category: data-processing
    tags: [csv]
    parser_name: pytest
    max_agent_timeout_sec: 120.0
    max_test_timeout_sec: 180.0
    run_tests_in_same_shell: false
    """
)
COMPOSE = textwrap.dedent(
    """\
    services:
      client:
        build:
          dockerfile: Dockerfile
        image: ${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}
        container_name: ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME}
        command: ["sh", "-c", "sleep infinity"]
        environment:
          - TEST_DIR=${T_BENCH_TEST_DIR}
        volumes:
          - ${T_BENCH_TASK_LOGS_PATH}:${T_BENCH_CONTAINER_LOGS_PATH}
          - ${T_BENCH_TASK_AGENT_LOGS_PATH}:${T_BENCH_CONTAINER_AGENT_LOGS_PATH}
    """
)
DOCKERFILE = "FROM terminal-agent/base:bookworm\nWORKDIR /app\nCOPY prices.csv /app/prices.csv\n"
PRICES = "item,price\napple,3\npear,4\nplum,35\n"
TESTS = textwrap.dedent(
    """\
    from pathlib import Path


    def test_total_is_a_number():
        assert Path("/app/total.txt").read_text().strip().isdigit()


    def test_total_value():
        assert Path("/app/total.txt").read_text().strip() == "42"
    """
)
SOLUTION = "#!/bin/bash\nawk -F, 'NR > 1 { s += $2 } END { print s }' /app/prices.csv > /app/total.txt\n"
INSTALL_UV = (
    "#!/bin/bash\napt-get update\napt-get install -y curl\ncurl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh\n"
    "source $HOME/.local/bin/env\n"
)
RUN_TESTS = {
    "venv-python-m-pytest": INSTALL_UV + (
        "uv venv .tbench-testing\nsource .tbench-testing/bin/activate\nuv pip install pytest==8.4.1\n"
        "python -m pytest $TEST_DIR/test_outputs.py -rA\n"
    ),
    "uv-init": INSTALL_UV + "uv init\nuv add pytest==8.4.1\nuv run pytest $TEST_DIR/test_outputs.py -rA\n",
    "uv-run-pytest": INSTALL_UV + (
        "uv venv .tbench-testing\nsource .tbench-testing/bin/activate\nuv pip install pytest==8.4.1\n"
        "uv run pytest $TEST_DIR/test_outputs.py -rA\n"
    ),
}


def write_v1_task(parent: Path, name: str, run_tests: str) -> Path:
    task_dir = parent / name
    (task_dir / "tests").mkdir(parents=True)
    (task_dir / "task.yaml").write_text(TASK_YAML)
    (task_dir / "docker-compose.yaml").write_text(COMPOSE)
    (task_dir / "Dockerfile").write_text(DOCKERFILE)
    (task_dir / "prices.csv").write_text(PRICES)
    (task_dir / "tests" / "test_outputs.py").write_text(TESTS)
    (task_dir / "solution.sh").write_text(SOLUTION)
    (task_dir / "run-tests.sh").write_text(run_tests)
    return task_dir


@pytest.fixture(scope="module")
def both_readings(tmp_path_factory) -> dict[str, tuple[Task, Task, Path]]:
    """name -> (read directly, read through harbor task migrate, the migrated folder)."""
    root = tmp_path_factory.mktemp("v1")
    sources, migrated = root / "v1", root / "harbor"
    for name, script in RUN_TESTS.items():
        write_v1_task(sources, name, script)
    run = harbor("task", "migrate", "-i", str(sources), "-o", str(migrated))
    assert run.returncode == 0, run.stdout + run.stderr
    return {name: (read_tb_task(sources / name), read_harbor_task(migrated / name), migrated / name)
            for name in RUN_TESTS}


def episode(task: Task, replies: list[str]):
    config = EnvConfig(max_steps=len(replies) + 1, sandbox=SandboxConfig(), grading=GradingConfig())
    return run_episode(DockerIsolatedEnv(task, config), TerminalBenchAgent(), ScriptedModelClient(replies),
                       max_steps=len(replies) + 1)


def test_harbor_migrates_and_loads_each(both_readings):
    configs = harbor_task_configs([folder for _, _, folder in both_readings.values()])
    for folder, config in configs.items():
        assert "error" not in config, (folder, config)
        assert config["verifier"]["timeout_sec"] == 180.0
    for name, (direct, migrated, _) in both_readings.items():
        assert direct.verifier.mode is GradingMode.WEIGHTED_PYTEST, name
        assert migrated.verifier.mode is GradingMode.HARBOR, name
        assert "/tests/test_outputs.py" in migrated.test_support_files["test.sh"], name


@pytest.mark.parametrize("name", sorted(RUN_TESTS))
def test_oracle_and_no_op_get_one_verdict_both_ways(both_readings, name):
    direct, migrated, _ = both_readings[name]
    verdicts = {}
    for path, task in (("direct", direct), ("harbor", migrated)):
        oracle = episode(task, oracle_replies(task))
        noop = episode(task, noop_replies())
        verdicts[path] = (oracle.scored, oracle.reward, noop.scored, noop.reward)
        assert oracle.scored and oracle.reward == pytest.approx(1.0), (path, oracle.error, oracle.grade)
        assert noop.scored and noop.reward == 0.0, (path, noop.error, noop.grade)
    assert verdicts["direct"] == verdicts["harbor"]


def test_validate_checks_the_readable_tasks_and_lists_the_refused(tmp_path):
    """``tasks validate DIR`` on a folder where some tasks cannot be read here validates the rest and lists each
    refused one with its reason (exit 1: not everything was checked)."""
    import json

    from typer.testing import CliRunner

    from terminal_agent.cli import app

    folder = tmp_path / "tasks"
    write_v1_task(folder, "readable", RUN_TESTS["uv-run-pytest"])
    compose_only = write_v1_task(folder, "compose-only", RUN_TESTS["uv-run-pytest"])
    (compose_only / "Dockerfile").unlink()
    no_tests = write_v1_task(folder, "no-tests", RUN_TESTS["uv-run-pytest"])
    (no_tests / "tests" / "test_outputs.py").unlink()
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["tasks", "validate", str(folder), "-o", str(out), "-c", "2"],
                                env={"COLUMNS": "400"})
    assert result.exit_code == 1, result.output
    # the console may fold long lines (even inside a path) whatever COLUMNS says: compare without whitespace
    squashed = "".join(result.output.split())
    assert "refused:" in squashed and "compose-only" in squashed and "no-tests" in squashed, result.output
    assert "1/3valid,2refusedwhenread" in squashed, result.output
    manifest = json.loads((out / "validation.json").read_text())
    assert manifest["tasks"]["readable"]["ok"] is True, manifest["tasks"]
    refused = {Path(entry["location"]).name: entry for entry in manifest["refused"]}
    assert set(refused) == {"compose-only", "no-tests"}
    assert refused["compose-only"]["field"] == "Dockerfile"
    assert "test_outputs.py" in refused["no-tests"]["error"]
