"""End to end: the scripted model drives the real agent through the real env on the shipped tasks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.compat.rllm import Action
from terminal_agent.env import DockerIsolatedEnv, EnvConfig
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.base import ContextWindowExceededError
from terminal_agent.models.scripted import ScriptedModelClient, ScriptExhaustedError
from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.rollout.episode import run_episode
from terminal_agent.tasks.csv.format import read_tasks_csv
from terminal_agent.tasks.parquet.rows import task_to_row

pytestmark = pytest.mark.docker

DATASET = Path(__file__).resolve().parents[1] / "dataset" / "latest_verified.csv"
FINISH = "<finish>\nmessage: done\n</finish>"


def bash(command: str) -> str:
    return "<bash>\n" + yaml.safe_dump({"cmd": command}, default_style="|", width=10_000) + "</bash>"


@pytest.fixture(scope="module")
def task(docker_client):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    tasks = {t.task_id: t for t in read_tasks_csv(DATASET).tasks}
    chosen = tasks["fix-stats-script"]
    ensure_task_image(chosen)
    return chosen


def test_scripted_client_reports_finish_reason_and_runs_out_clearly():
    client = ScriptedModelClient([ModelResponse("<bash>\ncmd: ls", finish_reason="length")])
    assert client.complete([{"role": "user", "content": "x"}]).finish_reason == "length"
    with pytest.raises(ScriptExhaustedError, match="ran out of replies after 1"):
        client.complete([])
    echo = ScriptedModelClient(lambda messages: f"{len(messages)} messages")
    assert echo.complete([{"role": "user", "content": "x"}]).text == "1 messages" and echo.remaining is None


def test_reference_solution_scores_one(task):
    model = ScriptedModelClient([bash(task.solution), FINISH])
    result = run_episode(DockerIsolatedEnv(task), TerminalBenchAgent(), model, max_steps=5)
    assert result.scored and result.reward == pytest.approx(1.0), result.grade
    assert result.termination == "finished" and result.turns == 2
    assert result.completion_tokens > 0 and result.env_s > 0 and result.grade.timings["total_s"] > 0
    assert result.trajectory.reward == pytest.approx(1.0) and len(result.trajectory.steps) == 2


def test_a_failed_attempt_gets_partial_credit_and_doing_nothing_gets_none(task):
    # fixes both bugs but drops the max line: only the default file's mean passes (weight 1 of 4); the input
    # is untouched, so the guard passes and caps nothing
    partial = task.solution + "\nsed -i '/max=/d' /app/stats.py\n"
    model = ScriptedModelClient([bash(partial), FINISH])
    result = run_episode(DockerIsolatedEnv(task), TerminalBenchAgent(), model, max_steps=5)
    assert result.scored
    assert result.reward == pytest.approx(1.0 / 4.0)
    passed = {t.name for t in result.grade.tests if t.passed}
    assert passed == {"test_default_file_mean", "test_input_file_unchanged"}
    # leaving the bug in place earns nothing: the "input unchanged" check is a guard, not credit
    model = ScriptedModelClient([bash("python3 /app/stats.py || true"), FINISH])
    idle = run_episode(DockerIsolatedEnv(task), TerminalBenchAgent(), model, max_steps=5)
    assert idle.scored and idle.reward == 0.0
    assert {t.name for t in idle.grade.tests if t.passed} == {"test_input_file_unchanged"}


def test_hitting_max_steps_is_still_graded(task):
    replies = [bash(task.solution)] + [bash("ls /app")] * 5
    model = ScriptedModelClient(replies)
    env = DockerIsolatedEnv(task, EnvConfig(max_steps=50))  # the loop, not the env, cuts the episode
    result = run_episode(env, TerminalBenchAgent(), model, max_steps=3)
    assert result.termination == "max_steps" and result.turns == 3
    assert result.scored and result.reward == pytest.approx(1.0)
    assert env.sandbox is None  # released by the grading


def _overflow_after(replies: list[str]):
    """A model that answers ``replies`` and then reports a full context window."""

    def reply(messages):
        assistant_turns = sum(1 for m in messages if m["role"] == "assistant")
        if assistant_turns >= len(replies):
            raise ContextWindowExceededError("prompt longer than the context window")
        return replies[assistant_turns]

    return ScriptedModelClient(reply)


def test_context_overflow_mid_episode_is_graded_like_a_truncation(task):
    result = run_episode(DockerIsolatedEnv(task), TerminalBenchAgent(), _overflow_after([bash(task.solution)]), max_steps=5)
    assert result.termination == "context_limit" and result.turns == 1
    assert result.scored and result.reward == pytest.approx(1.0)  # the fix the agent made counts


def test_context_overflow_on_the_first_call_is_not_scored(task):
    result = run_episode(DockerIsolatedEnv(task), TerminalBenchAgent(), _overflow_after([]), max_steps=5)
    assert not result.scored and result.error_kind == "provider" and result.turns == 0


def test_malformed_yaml_gets_a_teaching_message_and_the_episode_goes_on(task):
    malformed = "<file>\naction: [read\npath: /app/stats.py\n</file>"
    model = ScriptedModelClient([malformed, bash(task.solution), FINISH])
    agent = TerminalBenchAgent()
    result = run_episode(DockerIsolatedEnv(task), agent, model, max_steps=5)
    assert result.turns == 3 and result.reward == pytest.approx(1.0)
    teaching = model.calls[1][-1]["content"]
    assert "<format_error>" in teaching and "<file>" in teaching


def test_judge_mixes_in_with_seed_weights_and_falls_back_when_it_fails(task):
    judge_client = ScriptedModelClient(["Clean fix.\nSCORE: 0.5", "I refuse to score"])
    config = EnvConfig(reward=RewardConfig.seed_weights())
    for expected, judge_scored in ((0.65 + 0.35 * 0.5, True), (1.0, False)):
        model = ScriptedModelClient([bash(task.solution), FINISH])
        env = DockerIsolatedEnv(task, config, judge_client=judge_client)
        result = run_episode(env, TerminalBenchAgent(), model, max_steps=5)
        assert result.scored and result.reward == pytest.approx(expected)
        assert result.info["judge_scored"] is judge_scored
    assert "judge_error" in result.info and "stats.py" in judge_client.calls[0][0]["content"]


def _rllm_loop(env, agent, model, max_steps, pass_action_object: bool):
    """rLLM's loop: AgentExecutionEngine passes Action.action; MultiTurnWorkflow passes the Action."""
    observation, info = env.reset()
    agent.reset()
    agent.update_from_env(observation, 0.0, False, info)
    reward, done = 0.0, False
    for _ in range(max_steps):
        response = model.complete(agent.chat_completions)
        action = agent.update_from_model(response.text)
        assert isinstance(action, Action) and isinstance(action.action, str)
        observation, reward, done, info = env.step(action if pass_action_object else action.action)
        agent.update_from_env(observation, reward, done, info)
        if done:
            break
    if not done and hasattr(env, "compute_final_reward"):
        reward = env.compute_final_reward()
    return reward, done, info


def test_agent_execution_engine_shape_from_a_parquet_row(task):
    env = DockerIsolatedEnv.from_dict({**task_to_row(task)["extra_info"], "max_steps": 10})
    model = ScriptedModelClient([bash(task.solution), bash("cat /app/numbers.txt | head -3")])
    try:
        reward, done, _ = _rllm_loop(env, TerminalBenchAgent(), model, max_steps=2, pass_action_object=False)
    finally:
        env.close()
    assert not done and reward == pytest.approx(1.0)  # graded by compute_final_reward


def test_multi_turn_workflow_shape_resets_twice_and_never_closes(task):
    env = DockerIsolatedEnv(task)
    env.reset()  # the workflow resets once when it builds the env ...
    first = env.sandbox.id
    model = ScriptedModelClient([bash(task.solution), FINISH])
    reward, done, info = _rllm_loop(env, TerminalBenchAgent(), model, max_steps=5, pass_action_object=True)
    assert done and reward == pytest.approx(1.0) and info["scored"]
    import docker

    with pytest.raises(docker.errors.NotFound):
        docker.from_env().containers.get(first)  # ... and the second reset released the first container
    assert env.sandbox is None  # ... and done released the second one: no close() needed
