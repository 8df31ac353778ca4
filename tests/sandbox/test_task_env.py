"""A task's env (Harbor ``[environment.env]``): templates resolved from the host, clear errors, the pool keeps
sandboxes of different env apart, and the env episode's sandbox has it."""

from __future__ import annotations

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.sandbox.backends import start_sandbox
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.pool import SandboxPool
from terminal_agent.sandbox.task_env import resolve_sandbox_env
from terminal_agent.tasks.model import TaskLimits


def test_templates_resolve_from_the_host_and_the_rest_is_literal():
    host = {"API_KEY": "k-123", "EMPTY": ""}
    env = {
        "KEY": "${API_KEY}",
        "URL": "https://x/${API_KEY}/y",
        "MODE": "${UNSET_MODE:-fast}",
        "BLANK": "${EMPTY:-filled}",  # as in the shell, :- also replaces an empty value
        "RAW": "$API_KEY and ${not a template} and $$",
        "SET_EMPTY": "${EMPTY}",
    }
    assert resolve_sandbox_env(env, host_env=host) == {
        "KEY": "k-123",
        "URL": "https://x/k-123/y",
        "MODE": "fast",
        "BLANK": "filled",
        "RAW": "$API_KEY and ${not a template} and $$",
        "SET_EMPTY": "",
    }


def test_a_resolved_value_is_never_resolved_again():
    assert resolve_sandbox_env({"A": "${OUTER}"}, host_env={"OUTER": "${INNER}", "INNER": "x"}) == {"A": "${INNER}"}


def test_a_missing_variable_names_itself_and_the_task():
    with pytest.raises(ConfigError) as raised:
        resolve_sandbox_env({"TOKEN": "Bearer ${TA_SURELY_UNSET_TOKEN}"}, task_id="fetch-data", host_env={})
    message = str(raised.value)
    assert "TA_SURELY_UNSET_TOKEN" in message and "'fetch-data'" in message and "TOKEN" in message
    assert "${TA_SURELY_UNSET_TOKEN:-default}" in message  # says how to give a default


def test_start_sandbox_refuses_before_anything_starts():
    with pytest.raises(ConfigError, match="TA_SURELY_UNSET.*not set"):
        start_sandbox(SandboxConfig(), "terminal-agent/never:started", TaskLimits(), env={"X": "${TA_SURELY_UNSET}"},
                      task_id="t1")


@pytest.mark.docker
def test_the_pool_keeps_sandboxes_of_different_env_apart(base_image, monkeypatch):
    monkeypatch.setenv("TA_POOL_SECRET", "from-host")
    with SandboxPool(SandboxConfig(pool_size=1), run_id="test-task-env-pool") as pool:
        pool.prewarm(base_image, TaskLimits(), wait=True, env={"WHO": "a"})
        assert pool.warm_count(base_image, TaskLimits(), env={"WHO": "a"}) == 1
        assert pool.warm_count(base_image, TaskLimits(), env={"WHO": "b"}) == 0
        assert pool.warm_count(base_image, TaskLimits()) == 0
        first = pool.acquire(base_image, TaskLimits(), env={"WHO": "b"})  # not the warm one of WHO=a
        second = pool.acquire(base_image, TaskLimits(), env={"WHO": "a", "SECRET": "${TA_POOL_SECRET}"})
        third = pool.acquire(base_image, TaskLimits(), env={"WHO": "a"})
        try:
            assert first.exec("echo $WHO", 10).output == "b\n"
            assert second.exec("echo $WHO $SECRET", 10).output == "a from-host\n"
            assert third.exec("echo $WHO", 10).output == "a\n"
            assert pool.stats.hits >= 1
        finally:
            for sandbox in (first, second, third):
                pool.release(sandbox)
        with pytest.raises(ConfigError, match="'pooled-task'.*TA_POOL_UNSET"):
            pool.acquire(base_image, TaskLimits(), env={"X": "${TA_POOL_UNSET}"}, task_id="pooled-task")


@pytest.mark.docker
def test_an_episode_whose_task_env_reaches_the_agents_shell(base_image, monkeypatch):
    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.env import DockerIsolatedEnv, EnvConfig
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.episode import run_episode
    from terminal_agent.tasks.model import Task

    monkeypatch.setenv("TA_EPISODE_ANSWER", "42")
    task = Task(
        task_id="task-env-episode",
        instruction="Write the answer to /srv/answer.txt.",
        dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /srv\n",
        env={"ANSWER": "${TA_EPISODE_ANSWER}", "UNIT": "${TA_EPISODE_UNIT:-km}"},
        test_source="def test_answer():\n    assert open('/srv/answer.txt').read().split() == ['42', 'km']\n",
        test_weights={"test_answer": 1.0},
    )
    replies = ['<bash>\ncmd: echo "$ANSWER $UNIT" > answer.txt\n</bash>', "<finish>\nmessage: done\n</finish>"]
    env = DockerIsolatedEnv(task, EnvConfig(max_steps=4))
    result = run_episode(env, TerminalBenchAgent(), ScriptedModelClient(replies), max_steps=4)
    assert result.scored and result.reward == pytest.approx(1.0), result.grade
