"""terminal-bench v1 tasks built from their docker-compose.yaml (``tasks/terminal_bench/compose.py``).

A single-service compose file is one container: its ``build.context`` folder and ``dockerfile`` are the build, its
``environment`` the task's env, ``working_dir`` a WORKDIR; terminal-bench's defaults (image and container names,
``sleep infinity``, ``TEST_DIR``, the log volumes) are understood. A compose-only task of that kind validates here
(oracle 1.0, no-op 0, in Docker, read directly and through stock ``harbor task migrate``); a file of two services is
refused naming both; any other setting is refused naming its key; ``tasks inspect`` shows the reading key by key.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harbor_reference import harbor
from terminal_agent.cli import app
from terminal_agent.errors import TaskFormatError
from terminal_agent.task_quality.validation import noop_replies, oracle_replies
from terminal_agent.tasks.harbor.format import read_harbor_task
from terminal_agent.tasks.terminal_bench.compose import COMPOSE_METADATA_KEY
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task
from test_v1_harbor_verdicts import INSTALL_UV, PRICES, TASK_YAML, episode

COMPOSE = textwrap.dedent(
    """\
    services:
      client:
        build:
          context: ./client
          dockerfile: Dockerfile
        image: ${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}
        container_name: ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME}
        command: ["sh", "-c", "sleep infinity"]
        working_dir: /srv/ledger
        environment:
          - TEST_DIR=${T_BENCH_TEST_DIR}
          - LEDGER_CURRENCY=EUR
        volumes:
          - ${T_BENCH_TASK_LOGS_PATH}:${T_BENCH_CONTAINER_LOGS_PATH}
          - ${T_BENCH_TASK_AGENT_LOGS_PATH}:${T_BENCH_CONTAINER_AGENT_LOGS_PATH}
    """
)
TWO_SERVICES = COMPOSE + "  ledger-db:\n    build:\n      context: ./db\n"
DOCKERFILE = "FROM terminal-agent/base:bookworm\nRUN mkdir -p /srv/ledger\nCOPY prices.csv /srv/ledger/prices.csv\n"
# the tests read the expected total from the tests folder ($TEST_DIR) and the currency from the compose file's env
TESTS = textwrap.dedent(
    """\
    import os
    from pathlib import Path


    def test_total_value():
        expected = (Path(os.environ["TEST_DIR"]) / "expected_total.txt").read_text().strip()
        assert Path("/srv/ledger/total.txt").read_text().strip() == expected


    def test_total_has_the_currency():
        assert Path("/srv/ledger/total.txt").read_text().strip() == "42"
        assert Path("/srv/ledger/currency.txt").read_text().strip() == os.environ["LEDGER_CURRENCY"] == "EUR"
    """
)
# relative paths: the agent's shell starts in working_dir
SOLUTION = ("#!/bin/bash\nawk -F, 'NR > 1 { s += $2 } END { print s }' prices.csv > total.txt\n"
            'echo "$LEDGER_CURRENCY" > currency.txt\n')
RUN_TESTS = INSTALL_UV + (
    "uv venv .tbench-testing\nsource .tbench-testing/bin/activate\nuv pip install pytest==8.4.1\n"
    "uv run pytest $TEST_DIR/test_outputs.py -rA\n"
)


def write_compose_task(parent: Path, name: str, compose: str = COMPOSE) -> Path:
    task_dir = parent / name
    (task_dir / "tests").mkdir(parents=True)
    (task_dir / "client").mkdir()
    (task_dir / "task.yaml").write_text(TASK_YAML.replace("/app/", "/srv/ledger/"))
    (task_dir / "docker-compose.yaml").write_text(compose)
    (task_dir / "client" / "Dockerfile").write_text(DOCKERFILE)
    (task_dir / "client" / "prices.csv").write_text(PRICES)
    (task_dir / "tests" / "test_outputs.py").write_text(TESTS)
    (task_dir / "tests" / "expected_total.txt").write_text("42\n")
    (task_dir / "solution.sh").write_text(SOLUTION)
    (task_dir / "run-tests.sh").write_text(RUN_TESTS)
    return task_dir


def test_a_single_service_compose_task_is_read_as_one_container(tmp_path):
    task = read_tb_task(write_compose_task(tmp_path, "ledger"))
    assert task.dockerfile == DOCKERFILE + "# mapped from docker-compose.yaml\nWORKDIR /srv/ledger\n"
    assert task.files == {"prices.csv": PRICES}  # the build context is client/, its Dockerfile the build
    assert task.env == {"LEDGER_CURRENCY": "EUR"}  # TEST_DIR is terminal-bench's, set by the grader
    record = task.metadata[COMPOSE_METADATA_KEY]
    assert (record["service"], record["build_context"], record["dockerfile"]) == ("client", "client", "Dockerfile")
    status = {entry["key"]: entry["status"] for entry in record["settings"]}
    assert status["services.client.environment.LEDGER_CURRENCY"] == "mapped"
    assert status["services.client.working_dir"] == "mapped"
    assert status["services.client.environment.TEST_DIR"] == "default"
    assert status["services.client.volumes"] == "default" and status["services.client.command"] == "default"
    assert status["services.client.image"] == "kept"
    # written back (ours: a Dockerfile beside task.yaml) it reads back the same
    assert read_tb_task(write_tb_task(task, tmp_path / "out")) == task


def test_a_two_service_compose_file_is_refused_naming_both_services(tmp_path):
    with pytest.raises(TaskFormatError, match=r"2 services \(client, ledger-db\)") as info:
        read_tb_task(write_compose_task(tmp_path, "ledger", TWO_SERVICES))
    assert info.value.field == "docker-compose.yaml:services"


@pytest.mark.parametrize(
    "edit, key",
    [
        (lambda c: c.replace("    volumes:\n", "    ports: ['8080:80']\n    volumes:\n"), "services.client.ports"),
        (lambda c: c + "      - ./data:/data\n", "services.client.volumes"),
        (lambda c: c.replace('["sh", "-c", "sleep infinity"]', '["nginx", "-g", "daemon off;"]'),
         "services.client.command"),
        (lambda c: c.replace("      dockerfile: Dockerfile\n", "      args: {X: 1}\n"),
         "services.client.build.args"),
        (lambda c: c.replace("context: ./client", "context: ../elsewhere"), "services.client.build.context"),
        (lambda c: c + "networks:\n  default: {}\n", "networks"),
        (lambda c: c.replace("LEDGER_CURRENCY=EUR", "LEDGER_CURRENCY=${T_BENCH_TASK_LOGS_PATH}"),
         "services.client.environment.LEDGER_CURRENCY"),
    ],
)
def test_a_setting_that_cannot_be_mapped_is_refused_naming_the_key(tmp_path, edit, key):
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(write_compose_task(tmp_path, "ledger", edit(COMPOSE)))
    assert info.value.field == f"docker-compose.yaml:{key}", str(info.value)
    assert key in str(info.value)


def test_tasks_inspect_shows_the_reading(tmp_path):
    folder = tmp_path / "tasks"
    write_compose_task(folder, "ledger")
    write_compose_task(folder, "ledger-with-db", TWO_SERVICES)
    result = CliRunner().invoke(app, ["tasks", "inspect", str(folder), "--json"])
    assert result.exit_code == 1, result.output  # one task is refused
    report = {Path(entry["location"]).name: entry for entry in json.loads(result.output)["tasks"]}
    read = next(entry for entry in report.values() if entry["task_id"] == "ledger")
    mapped = {entry["key"]: entry for entry in read["mapped"]}
    assert mapped["docker-compose.yaml:services.client.environment.LEDGER_CURRENCY"]["task_value"] == "EUR"
    assert mapped["docker-compose.yaml:services.client.working_dir"]["value"] == "/srv/ledger"
    assert mapped["docker-compose.yaml:services.client.build"]["task_value"] == "client/Dockerfile"
    assert "docker-compose.yaml:services.client.environment.TEST_DIR" in {e["key"] for e in read["default"]}
    refused = next(entry for entry in report.values() if entry["task_id"] is None)
    assert refused["error_field"] == "docker-compose.yaml:services"
    assert "client, ledger-db" in refused["error"]


@pytest.mark.docker
def test_a_single_service_compose_task_validates_read_directly_and_through_harbor(tmp_path):
    write_compose_task(tmp_path / "v1", "ledger")
    run = harbor("task", "migrate", "-i", str(tmp_path / "v1"), "-o", str(tmp_path / "harbor"))
    assert run.returncode == 0, run.stdout + run.stderr
    for path, task in (("direct", read_tb_task(tmp_path / "v1" / "ledger")),
                       ("harbor", read_harbor_task(tmp_path / "harbor" / "ledger"))):
        oracle = episode(task, oracle_replies(task))
        noop = episode(task, noop_replies())
        assert oracle.scored and oracle.reward == pytest.approx(1.0), (path, oracle.error, oracle.grade)
        assert noop.scored and noop.reward == 0.0, (path, noop.error, noop.grade)
