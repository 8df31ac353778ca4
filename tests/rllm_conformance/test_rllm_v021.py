"""Our classes through rLLM v0.2.1's real AgentExecutionEngine (its agent_class/env_class path), real Docker."""

from __future__ import annotations

import asyncio

import docker
import pytest
from omegaconf import OmegaConf

from conftest import FINISH, LOOK, SOLVE, TASK, flat_task, masked_text, RLLM_VERSION
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.sandbox.labels import RUN_ID

if not RLLM_VERSION.startswith("0.2"):
    pytest.skip(f"needs rLLM 0.2* (installed: {RLLM_VERSION})", allow_module_level=True)
pytestmark = pytest.mark.docker

from rllm.engine.agent_execution_engine import AgentExecutionEngine  # noqa: E402
from rllm.parser.chat_template_parser import QwenChatTemplateParser  # noqa: E402

from terminal_agent.agent import TerminalBenchAgent  # noqa: E402
from terminal_agent.compat.rllm import step_metadata  # noqa: E402
from terminal_agent.env import DockerIsolatedEnv  # noqa: E402
from terminal_agent.training.verl.rllm_engines import ModelClientRolloutEngine  # noqa: E402


def make_engine(client, tokenizer, run_id, max_steps=5):
    engine = AgentExecutionEngine(
        engine_name="openai",
        tokenizer=None,  # set below: with a tokenizer the OpenAI engine runs the parser check SmolLM2 fails
        # SmolLM2 speaks ChatML. rLLM's generic parser fails its own equivalence check on SmolLM2's template
        # (every single-message render gets a default system message), so take rLLM's ChatML parser.
        chat_parser=QwenChatTemplateParser(tokenizer),
        agent_class=TerminalBenchAgent,
        env_class=DockerIsolatedEnv,
        agent_args={"training": True},
        env_args={"run_id": run_id},
        max_steps=max_steps,
        max_prompt_length=4096,
        max_response_length=8192,
        n_parallel_agents=1,
        config=OmegaConf.create({"rllm": {"filter_token_mismatch": True, "disable_thinking": False}}),
        # the engine builds an OpenAI client at construction; it is replaced by ours below and never called
        rollout_engine_args={"api_key": "unused", "base_url": "http://127.0.0.1:9/v1"},
    )
    # v0.2.1 accepts only its own engine names; a custom rollout engine is plugged in after construction
    engine.rollout_engine = ModelClientRolloutEngine(client, tokenizer)
    engine.tokenizer = tokenizer
    return engine


def run_text(client, tokenizer, run_id, max_steps=5):
    engine = make_engine(client, tokenizer, run_id, max_steps)
    try:
        return asyncio.run(engine.execute_tasks([flat_task()]))
    finally:
        engine.executor.shutdown(wait=True)


def test_solution_scores_one_with_grade_on_the_last_step(task_image, tokenizer, run_id):
    [trajectory] = run_text(ScriptedModelClient([SOLVE, FINISH]), tokenizer, run_id)
    assert trajectory.reward == pytest.approx(1.0)
    last = step_metadata(trajectory.steps[-1])
    assert last["scored"] is True and last["termination"] == "finished"
    assert last["grade"]["tests"] and all(t["passed"] for t in last["grade"]["tests"])


def test_noop_is_scored_below_one(task_image, tokenizer, run_id):
    [trajectory] = run_text(ScriptedModelClient([FINISH]), tokenizer, run_id)
    assert trajectory.reward == pytest.approx(0.25)
    assert step_metadata(trajectory.steps[-1])["scored"] is True


def test_a_cut_episode_carries_grade_scored_and_termination_on_its_last_step(task_image, tokenizer, run_id):
    """v0.2.1 keeps only compute_final_reward()'s float; the rest must still reach the step."""
    [trajectory] = run_text(ScriptedModelClient([SOLVE, LOOK]), tokenizer, run_id, max_steps=2)
    assert trajectory.steps[-1].reward == pytest.approx(1.0)
    last = step_metadata(trajectory.steps[-1])
    assert last["termination"] == "truncated" and last["scored"] is True and "grade" in last


def test_a_dead_container_is_flagged_not_scored(task_image, tokenizer, run_id):
    def kill_then_look(messages):
        if len(messages) > 2:
            for container in docker.from_env().containers.list(filters={"label": f"{RUN_ID}={run_id}"}):
                container.kill()
        return LOOK

    [trajectory] = run_text(ScriptedModelClient(kill_then_look), tokenizer, run_id)
    last = step_metadata(trajectory.steps[-1])
    assert last["scored"] is False and last["error_kind"] == "sandbox" and last["reward"] is None


def test_token_mode_masks_cover_exactly_the_assistant_tokens(task_image, tokenizer, run_id):
    replies = [LOOK, SOLVE, FINISH]
    engine = make_engine(ScriptedModelClient(replies), tokenizer, run_id)
    env = DockerIsolatedEnv.from_dict({**flat_task(), "run_id": run_id})
    agent = TerminalBenchAgent(training=True)
    engine.update_envs_and_agents([env], [agent])
    try:
        result = asyncio.run(engine.run_agent_trajectory_async(0, application_id="conformance", mode="Token"))
    finally:
        engine.executor.shutdown(wait=True)
    masks = result["response_masks"].tolist()
    tokens = result["response_tokens"].tolist()
    assert result["metrics"]["token_mismatch"] == 0.0  # rLLM found every turn cumulative
    assert 0 < sum(masks) < len(masks)
    assert masked_text(tokens, masks, tokenizer) == "".join(r + tokenizer.eos_token for r in replies)
    assert result["trajectory_reward"] == pytest.approx(1.0)


def test_compaction_in_training_mode_is_refused():
    from terminal_agent.errors import ConfigError

    with pytest.raises(ConfigError, match="zeroes every response mask"):
        TerminalBenchAgent(training=True, compaction=True)
    assert TerminalBenchAgent(training=True).compaction_enabled is False
    assert TASK.task_id  # the task fixture module imported cleanly
