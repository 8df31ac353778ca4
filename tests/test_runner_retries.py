"""Retries of flagged episodes (RolloutConfig.retries) and a lost daemon classed as a sandbox failure."""

from __future__ import annotations

import textwrap
import threading

import docker
import pytest

from terminal_agent.errors import SandboxUnavailableError, error_kind
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner
from terminal_agent.sandbox import labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.lifecycle import create_sandbox_container
from terminal_agent.tasks.model import Task, TaskLimits

TASK = Task(
    task_id="retry-answer",
    instruction="Write 42 to /app/answer.txt.",
    dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
    test_source=textwrap.dedent(
        """
        def test_answer():
            assert open("/app/answer.txt").read().strip() == "42"
        """
    ),
    test_weights={"test_answer": 1.0},
    limits=TaskLimits(memory_mb=256, pids=128, test_timeout_s=10.0),
)


def killing_model(run_id: str, kills: list[str], lock: threading.Lock) -> ScriptedModelClient:
    """Answers the task in two turns; the first call of the whole run kills its own container (a real docker kill)."""

    def reply(messages: list[dict[str, str]]) -> str:
        turns = sum(1 for m in messages if m["role"] == "assistant")
        with lock:
            if not kills:
                api = docker.from_env().api
                running = api.containers(filters={"label": [f"{labels.RUN_ID}={run_id}"], "status": "running"})
                assert len(running) == 1, running
                api.kill(running[0]["Id"])
                kills.append(running[0]["Id"])
        if turns == 0:
            return "<bash>\ncmd: echo 42 > /app/answer.txt\n</bash>"
        return "<finish>\nmessage: done\n</finish>"

    return ScriptedModelClient(reply)


def run_with_kill(retries: int) -> tuple[list, list]:
    config = RolloutConfig(attempts=1, max_steps=3, concurrency=1, sweep_leaked=False, retries=retries, retry_delay_s=0.1,
                           sandbox=SandboxConfig())
    kills: list[str] = []
    lock = threading.Lock()
    attempts: list = []
    runner = RolloutRunner(
        ScriptedModelClient([]), config,
        model_for_trial=lambda spec: killing_model(config.run_id, kills, lock),
        on_attempt=lambda spec, trial, final: attempts.append((spec.attempt, trial.status, trial.error, final)),
    )
    results = runner.run([TASK])
    assert len(kills) == 1
    return results.trials, attempts


@pytest.mark.docker
def test_a_sandbox_failure_is_retried_and_only_the_last_attempt_is_kept():
    trials, attempts = run_with_kill(retries=2)
    assert len(trials) == 1 and trials[0].status == "scored" and trials[0].reward == 1.0
    assert [(a[1], a[3]) for a in attempts] == [("error", False), ("scored", True)]
    assert attempts[0][2].kind == "sandbox"


@pytest.mark.docker
def test_without_retries_the_sandbox_failure_is_the_trial():
    trials, attempts = run_with_kill(retries=0)
    assert len(trials) == 1 and trials[0].status == "error" and trials[0].error.kind == "sandbox"
    assert len(attempts) == 1 and attempts[0][3] is True


def test_a_daemon_that_does_not_answer_is_a_sandbox_failure(tmp_path):
    # a real client on a socket nobody serves: docker-py lets requests' ConnectionError through
    api = docker.APIClient(base_url=f"unix://{tmp_path}/gone.sock", version="1.41", timeout=2)
    with pytest.raises(SandboxUnavailableError) as caught:
        create_sandbox_container(api, "terminal-agent/base:bookworm", TaskLimits(), SandboxConfig(), "retry-test", None)
    assert error_kind(caught.value) == "sandbox"
