"""DockerIsolatedEnv against real containers: lifecycle, rLLM call shapes, termination, threads."""

from __future__ import annotations

import os
import threading

import docker
import pytest

from terminal_agent.compat.rllm import Action
from terminal_agent.env import DockerIsolatedEnv, EnvConfig, env_config_from_args
from terminal_agent.sandbox.labels import RUN_ID
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.parquet.rows import task_to_row

TASK = Task(
    task_id="env-hello",
    instruction="Write hello to /app/hello.txt",
    dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
    test_source="def test_hello():\n    assert open('/app/hello.txt').read().strip() == 'hello'\n",
    test_weights={"test_hello": 1.0},
)
SOLVE = "<bash>\ncmd: echo hello > /app/hello.txt\n</bash>"
FINISH = "<finish>\nmessage: done\n</finish>"


def container_exists(container_id: str) -> bool:
    try:
        docker.from_env().containers.get(container_id)
        return True
    except docker.errors.NotFound:
        return False


@pytest.fixture(scope="module")
def image(docker_client):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    return ensure_task_image(TASK)


def test_env_config_from_flat_rllm_args():
    config = env_config_from_args(
        {"task_id": "x", "max_steps": 7, "reward_weights": {"tests": 0.65, "judge": 0.35}, "actions": {"max_output_chars": 999}}
    )
    assert config.max_steps == 7
    assert config.reward.test_weight == 0.65 and config.reward.judge_weight == 0.35
    assert config.actions.max_output_chars == 999
    with pytest.raises(Exception, match="max_steps"):
        env_config_from_args({"max_steps": 0})


def test_from_dict_takes_a_parquet_row_plus_env_args():
    row = task_to_row(TASK)
    env = DockerIsolatedEnv.from_dict({**row["extra_info"], "max_steps": 3, "judge_weight": 0.0})
    assert env.task == TASK
    assert env.config.max_steps == 3
    assert DockerIsolatedEnv.is_multithread_safe() is True


@pytest.mark.docker
def test_reset_is_idempotent_and_releases_the_old_container(image):
    env = DockerIsolatedEnv(TASK)
    try:
        observation, info = env.reset()
        assert observation["instruction"] == TASK.instruction
        first = info["container_id"]
        _, info2 = env.reset()
        assert info2["container_id"] != first
        assert not container_exists(first)
        assert container_exists(info2["container_id"])
        # without EnvConfig.run_id the containers of one process share one run id (cleanup scope)
        labels = docker.from_env().containers.get(info2["container_id"]).labels
        assert labels[RUN_ID] == f"pid{os.getpid()}"
    finally:
        env.close()
        env.close()  # idempotent
    assert not container_exists(info2["container_id"])


@pytest.mark.docker
def test_step_accepts_action_objects_and_payloads_and_grades_on_done(image):
    env = DockerIsolatedEnv(TASK)
    env.reset()
    container = env.sandbox.id
    observation, reward, done, info = env.step(Action(action=SOLVE))
    assert not done and reward == 0.0 and isinstance(info, dict)
    assert "<bash_output>" in observation
    info["mutable"] = True
    observation, reward, done, info = env.step(FINISH)
    assert done and reward == 1.0
    assert info["scored"] is True and info["termination"] == "finished"
    assert info["grade"]["tests"][0]["passed"] is True and "timings" in info["grade"]
    assert not container_exists(container)  # released on done
    assert env.compute_final_reward() == 1.0  # no second grading
    env.close()


@pytest.mark.docker
def test_malformed_yaml_teaches_and_consecutive_error_turns_end_the_episode(image):
    env = DockerIsolatedEnv(TASK, EnvConfig(actions={"max_consecutive_error_turns": 2}))
    env.reset()
    bad = "<file>\naction: [unclosed\npath: /app/x\n</file>"  # YAML that does not parse
    observation, _, done, info = env.step(bad)
    assert not done and "<format_error>" in observation and info["only_errors"]
    observation, reward, done, info = env.step(bad)
    assert done and info["termination"] == "format_errors"
    assert info["scored"] is True and reward == 0.0
    env.close()


@pytest.mark.docker
def test_max_steps_ends_and_compute_final_reward_grades_a_cut_episode(image):
    env = DockerIsolatedEnv(TASK, EnvConfig(max_steps=2))
    env.reset()
    _, _, done, _ = env.step(SOLVE)
    assert not done
    # an engine that cuts the episode itself (max tokens) asks for the final reward
    assert env.compute_final_reward() == 1.0
    assert env.final_info["termination"] == "truncated"
    env.close()

    env = DockerIsolatedEnv(TASK, EnvConfig(max_steps=2))
    env.reset()
    env.step("<bash>\ncmd: 'true'\n</bash>")
    _, reward, done, info = env.step(SOLVE)
    assert done and info["termination"] == "max_steps" and reward == 1.0
    env.close()


@pytest.mark.docker
def test_a_broken_sandbox_ends_the_episode_unscored(image):
    env = DockerIsolatedEnv(TASK)
    env.reset()
    docker.from_env().containers.get(env.sandbox.id).kill()
    _, reward, done, info = env.step(SOLVE)
    assert done and reward == 0.0
    assert info["scored"] is False and info["error_kind"] == "sandbox"
    env.close()


@pytest.mark.docker
def test_eight_envs_in_threads(image):
    results: dict[int, tuple[float, dict]] = {}
    errors: list[BaseException] = []

    def episode(index: int) -> None:
        env = DockerIsolatedEnv(TASK)
        try:
            env.reset()
            content = "hello" if index % 2 == 0 else "nope"
            env.step(f"<bash>\ncmd: echo {content} > /app/hello.txt\n</bash>")
            _, reward, done, info = env.step(FINISH)
            assert done
            results[index] = (reward, info)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            env.close()

    threads = [threading.Thread(target=episode, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(240)
    assert not errors, errors
    assert len(results) == 8
    for index, (reward, info) in results.items():
        assert info["scored"], info
        assert reward == (1.0 if index % 2 == 0 else 0.0)
    assert len({info["grade"]["tests"][0]["passed"] for info in (r[1] for r in results.values())}) == 2



def test_final_reward_without_an_episode_is_flagged_not_scored():
    env = DockerIsolatedEnv(TASK)
    assert env.compute_final_reward() == 0.0
    assert env.final_info["scored"] is False and env.final_info["error_kind"] == "sandbox"
