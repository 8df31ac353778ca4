"""Our classes through rLLM HEAD's real engine: AgentWorkflowEngine + TerminalTaskWorkflow, real Docker.

The model is the shipped scripted client behind ``ModelClientRolloutEngine`` (token ids from the
embedded model's real tokenizer, as a vLLM server would report them).
"""

from __future__ import annotations

import asyncio

import docker
import pytest

from conftest import (
    BROKEN_IMAGE_TASK,
    FINISH,
    LOOK,
    SOLVE,
    TASK,
    assistant_tokens_only,
    flat_task,
    masked_text,
    RLLM_VERSION,
)
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.sandbox.labels import RUN_ID

if not RLLM_VERSION.startswith("0.3"):
    pytest.skip(f"needs rLLM 0.3* (installed: {RLLM_VERSION})", allow_module_level=True)
pytestmark = pytest.mark.docker

from rllm.engine.agent_workflow_engine import AgentWorkflowEngine  # noqa: E402
from rllm.workflows.multi_turn_workflow import MultiTurnWorkflow  # noqa: E402
from rllm.workflows.workflow import TerminationReason  # noqa: E402

from terminal_agent.agent import TerminalBenchAgent  # noqa: E402
from terminal_agent.compat.rllm import step_metadata  # noqa: E402
from terminal_agent.env import DockerIsolatedEnv  # noqa: E402
from terminal_agent.training.rllm_engines import ModelClientRolloutEngine  # noqa: E402
from terminal_agent.training.rllm_workflow import TerminalTaskWorkflow  # noqa: E402


def run_workflow(client, tasks, tokenizer, run_id, **workflow_args):
    engine = AgentWorkflowEngine(
        workflow_cls=TerminalTaskWorkflow,
        workflow_args={"env_args": {"run_id": run_id}, **workflow_args},
        rollout_engine=ModelClientRolloutEngine(client, tokenizer),
        n_parallel_tasks=1,
        retry_limit=1,
        raise_on_error=False,
    )
    try:
        return asyncio.run(engine.execute_tasks(tasks, task_ids=[t["task_id"] for t in tasks]))
    finally:
        engine.shutdown()


def test_solution_scores_one_and_every_step_carries_its_tokens(task_image, tokenizer, run_id):
    replies = [SOLVE, FINISH]
    [episode] = run_workflow(ScriptedModelClient(replies), [flat_task()], tokenizer, run_id)
    assert episode.termination_reason is TerminationReason.ENV_DONE
    [trajectory] = episode.trajectories
    assert trajectory.reward == pytest.approx(1.0)
    assert episode.is_correct
    assert trajectory.task["task_id"] == TASK.task_id  # rLLM's task dict is kept, not replaced by the instruction
    assert len(trajectory.steps) == 2
    for step in trajectory.steps:  # what rLLM's verl transform reads; without it the step is dropped
        assert step.model_output is not None and step.model_output.prompt_ids
        assert step.prompt_ids == list(step.model_output.prompt_ids) and step.response_ids
    last = step_metadata(trajectory.steps[-1])
    assert last["scored"] is True and last["termination"] == "finished" and last["reward"] == pytest.approx(1.0)
    assert step_metadata(trajectory)["scored"] is True
    # Token mode: the turns merge into one row whose mask covers exactly the assistant tokens
    response, mask = assistant_tokens_only(
        [s.prompt_ids for s in trajectory.steps], [s.response_ids for s in trajectory.steps], tokenizer
    )
    assert 0 < sum(mask) < len(mask)
    assert masked_text(response, mask, tokenizer) == "".join(r + tokenizer.eos_token for r in replies)


def test_noop_scores_below_one_but_is_scored(task_image, tokenizer, run_id):
    [episode] = run_workflow(ScriptedModelClient([FINISH]), [flat_task()], tokenizer, run_id)
    [trajectory] = episode.trajectories
    assert trajectory.reward == pytest.approx(0.25)  # /app exists (weight 1 of 4), hello.txt does not
    assert step_metadata(trajectory.steps[-1])["scored"] is True


def test_a_cut_episode_is_graded_on_what_it_left(task_image, tokenizer, run_id):
    [episode] = run_workflow(ScriptedModelClient([SOLVE, LOOK]), [flat_task()], tokenizer, run_id, max_steps=2)
    assert episode.termination_reason is TerminationReason.MAX_TURNS_EXCEEDED
    [trajectory] = episode.trajectories
    assert trajectory.reward == pytest.approx(1.0)  # it wrote the file, then ran out of turns: graded, not lost
    last = step_metadata(trajectory.steps[-1])
    assert last["termination"] == "max_steps" and last["scored"] is True


def test_a_reply_cut_by_the_output_limit_ends_the_episode_graded(task_image, tokenizer, run_id):
    from terminal_agent.interfaces import ModelResponse

    cut = ModelResponse(text="<bash>\ncmd: echo hel", finish_reason="length")
    [episode] = run_workflow(ScriptedModelClient([SOLVE, cut]), [flat_task()], tokenizer, run_id)
    assert episode.termination_reason is TerminationReason.MAX_RESPONSE_LENGTH_EXCEEDED
    [trajectory] = episode.trajectories
    assert step_metadata(trajectory.steps[-1])["termination"] == "output_limit"
    assert step_metadata(trajectory.steps[-1])["finish_reason"] == "length"
    assert trajectory.reward == pytest.approx(1.0)


def test_an_infrastructure_error_is_flagged_and_never_trained_on(task_image, tokenizer, run_id):
    def kill_then_look(messages):
        if len(messages) > 2:  # second turn: the container dies under the env
            for container in docker.from_env().containers.list(filters={"label": f"{RUN_ID}={run_id}"}):
                container.kill()
        return LOOK

    episodes = run_workflow(
        ScriptedModelClient(kill_then_look), [flat_task(), flat_task(BROKEN_IMAGE_TASK)], tokenizer, run_id,
        infra_retries=0,
    )
    assert len(episodes) == 2
    for episode, kind in zip(episodes, ("sandbox", "image")):
        # not ERROR: rLLM's verl trainer would retry it and then stop the whole run (raise_on_error=True)
        assert episode.termination_reason is TerminationReason.UNKNOWN
        [trajectory] = episode.trajectories
        assert trajectory.steps == []  # rLLM's transform drops it: no row trains on a fake reward 0
        facts = step_metadata(trajectory)
        assert facts["scored"] is False and facts["error_kind"] == kind and facts["reward"] is None
        assert episode.info["error"]["error_type"] == kind
        assert episode.info["terminal_agent"]["termination"] == f"{kind}_error"


def test_an_infrastructure_failure_is_retried_with_a_fresh_container(task_image, tokenizer, run_id):
    calls = {"n": 0}

    def kill_once(messages):
        calls["n"] += 1
        if calls["n"] == 1:  # the first attempt's container dies under it
            for container in docker.from_env().containers.list(filters={"label": f"{RUN_ID}={run_id}"}):
                container.kill()
            return LOOK
        return SOLVE if len(messages) <= 2 else FINISH

    [episode] = run_workflow(ScriptedModelClient(kill_once), [flat_task()], tokenizer, run_id, infra_retries=1)
    assert episode.termination_reason is TerminationReason.ENV_DONE
    assert episode.trajectories[0].reward == pytest.approx(1.0) and len(episode.trajectories[0].steps) == 2


def test_env_is_built_from_env_args_and_reset_by_task_as_multi_turn_workflow_does(task_image, tokenizer, run_id):
    """rLLM's stock MultiTurnWorkflow builds env_cls(**env_args) and resets it twice per task."""
    engine = AgentWorkflowEngine(
        workflow_cls=MultiTurnWorkflow,
        workflow_args={
            "agent_cls": TerminalBenchAgent,
            "env_cls": DockerIsolatedEnv,
            "agent_args": {"training": True},
            "env_args": {"run_id": run_id, "max_steps": 4},
            "max_steps": 4,
        },
        rollout_engine=ModelClientRolloutEngine(ScriptedModelClient([SOLVE, FINISH]), tokenizer),
        n_parallel_tasks=1,
        retry_limit=1,
        raise_on_error=False,
    )
    try:
        [episode] = asyncio.run(engine.execute_tasks([flat_task()], task_ids=[TASK.task_id]))
        workflow = engine.workflow_queue.get_nowait()
    finally:
        engine.shutdown()
    assert episode.termination_reason is TerminationReason.ENV_DONE
    assert episode.trajectories[0].steps[-1].reward == pytest.approx(1.0)
    assert workflow.env.task.task_id == TASK.task_id
    workflow.env.close()  # MultiTurnWorkflow never closes its env; the episode already released the container


def test_an_engine_refusing_a_long_prompt_cuts_the_episode_graded(task_image, tokenizer, run_id):
    """rLLM's engines raise TerminationEvent(MAX_PROMPT_LENGTH_EXCEEDED) past data.max_prompt_length."""
    from rllm.workflows.workflow import TerminationEvent

    seen = []

    class PromptCappedEngine(ModelClientRolloutEngine):
        async def get_model_response(self, messages, **kwargs):
            seen.append(kwargs.get("enforce_max_prompt_length"))
            if len(messages) > 3:  # the second turn's prompt is "too long"
                raise TerminationEvent(TerminationReason.MAX_PROMPT_LENGTH_EXCEEDED)
            return await super().get_model_response(messages, **kwargs)

    engine = AgentWorkflowEngine(
        workflow_cls=TerminalTaskWorkflow,
        workflow_args={"env_args": {"run_id": run_id}},
        rollout_engine=PromptCappedEngine(ScriptedModelClient([SOLVE, FINISH]), tokenizer),
        n_parallel_tasks=1,
        retry_limit=1,
        raise_on_error=False,
    )
    try:
        [episode] = asyncio.run(engine.execute_tasks([flat_task()], task_ids=[TASK.task_id]))
    finally:
        engine.shutdown()
    assert seen and all(flag is False for flag in seen)  # the workflow asks engines not to cap multi-turn prompts
    assert episode.termination_reason is TerminationReason.MAX_PROMPT_LENGTH_EXCEEDED
    [trajectory] = episode.trajectories
    assert trajectory.reward == pytest.approx(1.0) and len(trajectory.steps) == 1  # graded on what it left
