"""Our classes through rLLM HEAD's real engine: AgentWorkflowEngine + TerminalTaskWorkflow, real Docker.

The model is the shipped scripted client behind ``ModelClientRolloutEngine`` (token ids from the
embedded model's real tokenizer, as a vLLM server would report them).
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

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
from terminal_agent.training.verl.rllm_engines import ModelClientRolloutEngine  # noqa: E402
from terminal_agent.training.verl.rllm_workflow import TerminalTaskWorkflow  # noqa: E402


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


def test_an_episode_past_its_deadline_is_closed_and_the_pooled_workflow_runs_the_next(task_image, tokenizer, run_id):
    """The Workflow's wall clock is the one deadline rule with the task's own limits (agent 1 s + tests 1 s + the
    margin): a hung command is cut there (not at its own 500 s), its sandbox closed, the episode left untrained, and
    the same pooled Workflow then solves the next task with a new env and agent."""
    import time

    from terminal_agent.rollout.engine import episode_deadline_s

    limits = TASK.limits.model_copy(update={"agent_timeout_s": 1.0, "test_timeout_s": 1.0, "command_timeout_s": 600.0})
    hung = TASK.model_copy(update={"task_id": "conformance-hung", "instruction": "Wait a long while.", "limits": limits})
    envs = []

    def script(messages):
        if any("Wait a long while" in str(m.get("content")) for m in messages):
            return "<bash>\ncmd: sleep 500\n</bash>"
        return SOLVE if len(messages) <= 2 else FINISH

    engine = AgentWorkflowEngine(
        workflow_cls=TerminalTaskWorkflow, workflow_args={"env_args": {"run_id": run_id}},
        rollout_engine=ModelClientRolloutEngine(ScriptedModelClient(script), tokenizer),
        n_parallel_tasks=1, retry_limit=1, raise_on_error=False,
    )
    started = time.monotonic()
    try:
        asyncio.run(engine.initialize_pool())
        workflow = engine.workflow_queue.get_nowait()
        engine.workflow_queue.put_nowait(workflow)
        [late] = asyncio.run(engine.execute_tasks([flat_task(hung)], task_ids=[hung.task_id]))
        late_s = time.monotonic() - started
        envs.append(workflow.env)
        [solved] = asyncio.run(engine.execute_tasks([flat_task()], task_ids=[TASK.task_id]))
        envs.append(workflow.env)
    finally:
        engine.shutdown()
    deadline = episode_deadline_s(limits)
    assert deadline <= late_s < deadline + 30  # cut at its wall clock, not at the command's 500 s
    # unscored, as the engine records a hung episode in eval and the local trainer: no row trains on it
    assert late.termination_reason is TerminationReason.UNKNOWN and late.trajectories[0].steps == []
    assert late.info["terminal_agent"]["termination"] == "episode_timeout"
    assert solved.termination_reason is TerminationReason.ENV_DONE and solved.trajectories[0].reward == pytest.approx(1.0)
    assert envs[0] is not envs[1]  # the second episode never shared the first one's env
    # the run_id fixture asserts that no container of either episode is left


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


def test_the_workflow_reads_back_the_presets_episode_spec_and_builds_from_it(tokenizer):
    """rLLM's engine builds the Workflow from ``workflow_args``: it reads the preset's spec back equal, builds its env,
    agent and engine from it, hands the spec's timeout to rLLM, and names a bad argument."""
    from concurrent.futures import ThreadPoolExecutor

    from terminal_agent.errors import ConfigError
    from terminal_agent.rollout.episode_spec import EpisodeSpec
    from terminal_agent.training.episode_args import workflow_args_for
    from terminal_agent.training.preset_config import load_preset

    preset = load_preset("prod_32b_2x8_h100", ["sandbox.env.actions={max_consecutive_error_turns: 2}",
                                                 "trainer.harbor_rollouts.enabled=false"])
    spec = EpisodeSpec.from_preset(preset)
    rollout_engine = ModelClientRolloutEngine(ScriptedModelClient([FINISH]), tokenizer)
    engine = AgentWorkflowEngine(workflow_cls=TerminalTaskWorkflow, workflow_args=workflow_args_for(preset),
                                 rollout_engine=rollout_engine, n_parallel_tasks=1, retry_limit=1, raise_on_error=False)
    try:
        asyncio.run(engine.initialize_pool())
        workflow = engine.workflow_queue.get_nowait()
    finally:
        engine.shutdown()
    assert workflow.spec == spec and workflow.env.config == spec.env
    assert workflow.env.config.actions.max_consecutive_error_turns == 2 and workflow.env.config.sandbox.backend == "ray"
    assert workflow.agent.config.training and workflow.deadline_s(flat_task()) == spec.deadline_s(TASK.limits)
    assert workflow.timeout > spec.deadline_s(TASK.limits)  # rLLM's own wall clock never comes first
    assert workflow.engine.settings.sampling["max_tokens"] == preset.lengths.max_response_length_per_turn
    with ThreadPoolExecutor(1) as executor, pytest.raises(ConfigError, match=r"^workflow_args\.env_args\.sandbox\.pool_size"):
        TerminalTaskWorkflow(rollout_engine, executor, env_args={"sandbox": {"pool_size": -1}})


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


# --- our sandboxes through rLLM's Sandbox protocol (terminal_agent.compat.rllm_sandbox) ----------------
def _labelled(run_id):
    return docker.from_env().containers.list(all=True, filters={"label": f"{RUN_ID}={run_id}"})


def _check_the_protocol(sandbox, tmp_path, *, switches_users: bool):
    import os
    import time

    from rllm.sandbox.protocol import Sandbox as RLLMSandboxProtocol
    from rllm.sandbox.protocol import _safe_exec

    from terminal_agent.compat.rllm_sandbox import RLLMCommandFailed

    assert isinstance(sandbox, RLLMSandboxProtocol) and sandbox.is_alive()
    assert sandbox.exec("echo out; echo err >&2") == "out\n"  # stdout only, as rLLM's backends return
    sandbox.exec("cd /tmp && export LEAK=1")
    assert sandbox.exec("pwd; echo ${LEAK:-none}") == "/app\nnone\n"  # no state carries over between calls
    with pytest.raises(RuntimeError, match=r"exit 3") as failed:
        sandbox.exec("echo why >&2; exit 3")
    assert isinstance(failed.value, RLLMCommandFailed) and failed.value.exit_code == 3
    assert "why" in failed.value.stderr
    assert "exit 3" in _safe_exec(sandbox, "exit 3")  # rLLM's own helper catches it as a failed command
    started = time.monotonic()
    with pytest.raises(RLLMCommandFailed, match="timed out") as late:
        sandbox.exec("sleep 60", timeout=1)
    assert late.value.timed_out and time.monotonic() - started < 10
    assert sandbox.exec("pgrep -x sleep || echo gone").strip() == "gone"  # the deadline killed the command
    assert sandbox.exec("id -u", user="root") == "0\n"  # the shell's own user: no switch needed
    if switches_users:
        assert sandbox.exec("id -un", user="nobody") == "nobody\n"
    else:  # a backend that cannot switch users says so; the command never runs as root instead
        with pytest.raises(RLLMCommandFailed, match="runuser"):
            sandbox.exec("id -un", user="nobody")

    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    os.chmod(script, 0o755)
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "data.bin").write_bytes(bytes(range(256)))
    sandbox.upload_file(str(script), "/opt/tools/run.sh")
    assert sandbox.exec("/opt/tools/run.sh") == "ran\n"  # parents created, mode kept
    sandbox.upload_dir(str(tree), "/srv/tree")
    sandbox.download_file("/srv/tree/sub/data.bin", str(tmp_path / "back" / "data.bin"))
    assert (tmp_path / "back" / "data.bin").read_bytes() == bytes(range(256))
    with pytest.raises(FileNotFoundError):
        sandbox.download_file("/srv/tree/absent", str(tmp_path / "absent"))


def test_our_docker_sandbox_satisfies_rllm_sandbox_protocol_and_its_exec_contract(task_image, run_id, tmp_path):
    from terminal_agent.compat.rllm_sandbox import RLLMSandbox

    sandbox = RLLMSandbox.start(task_image, run_id=run_id)
    try:
        assert len(_labelled(run_id)) == 1
        _check_the_protocol(sandbox, tmp_path, switches_users=True)
    finally:
        sandbox.close()
    sandbox.close()  # idempotent
    assert not sandbox.is_alive()
    # the run_id fixture then asserts 0 containers of this run are left


def test_our_bwrap_sandbox_satisfies_rllm_sandbox_protocol_too(task_image, run_id, tmp_path):
    from bwrap_support import bwrap_config

    from terminal_agent.compat.rllm_sandbox import RLLMSandbox
    from terminal_agent.sandbox.backends import resolve_task_image

    config = bwrap_config([TASK])
    sandbox = RLLMSandbox.start(resolve_task_image(config, TASK), config, run_id=run_id)
    try:
        _check_the_protocol(sandbox, tmp_path, switches_users=False)
    finally:
        sandbox.close()
    assert not sandbox.is_alive()
    assert not list(Path(config.bwrap.state_dir).rglob(sandbox.name))  # its state dir is gone: nothing leaked


def _rllm_task_context_fields():
    """The fields of rLLM's TaskContext, read from its source (its module needs rLLM's gateway package)."""
    import ast
    import importlib.util

    source = Path(importlib.util.find_spec("rllm.engine.agentflow_engine").origin).read_text()
    [node] = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.name == "TaskContext"]
    return [item.target.id for item in node.body if isinstance(item, ast.AnnAssign)]


def _harbor_task(root, name, solve):
    """A Harbor task directory (task.toml, instruction, environment, solution, tests/test.sh -> reward.txt)."""
    task = root / name
    for sub in ("environment", "solution", "tests"):
        (task / sub).mkdir(parents=True)
    (task / "task.toml").write_text('version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = 120.0\n')
    (task / "instruction.md").write_text("Write the word hello into /app/hello.txt.\n")
    (task / "environment" / "Dockerfile").write_text("FROM terminal-agent/base:bookworm\nWORKDIR /app\n")
    (task / "solution" / "solve.sh").write_text(f"#!/bin/bash\n{solve}\n")
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        'if [ "$(cat /app/hello.txt 2>/dev/null)" = hello ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n'
    )
    return task


def test_an_rllm_sandboxed_agent_flow_runs_a_task_through_our_sandbox_hooks(task_image, run_id, tmp_path):
    """rLLM's OracleHarness (a SandboxedAgentFlow) and rLLM's own test.sh verifier, on sandboxes from our hooks.

    The engine's per-task sequence without its model gateway (the oracle calls no model): hooks.setup,
    run_agent_flow(env=ctx.env), ctx.evaluator.evaluate, ctx.run_teardown.
    """
    from rllm.harnesses.oracle import OracleHarness
    from rllm.sandbox.sandboxed_flow import SandboxedAgentFlow
    from rllm.types import AgentConfig, Task as RLLMTask, run_agent_flow

    from terminal_agent.compat.rllm_sandbox import RLLMSandbox, SandboxTaskContext, TerminalAgentTaskHooks

    _harbor_task(tmp_path, "hello", "echo hello > /app/hello.txt")
    _harbor_task(tmp_path, "wrong", "echo goodbye > /app/hello.txt")
    hooks = TerminalAgentTaskHooks(run_id=run_id)
    flow = OracleHarness()
    assert isinstance(flow, SandboxedAgentFlow)
    assert set(_rllm_task_context_fields()) == {f.name for f in dataclasses.fields(SandboxTaskContext)}
    rewards = {}
    for name in ("hello", "wrong"):
        task = RLLMTask(id=name, instruction=(tmp_path / name / "instruction.md").read_text(),
                        dataset_dir=tmp_path, sub_dir=Path(name))
        ctx = hooks.setup(task, flow, f"{name}:0")
        try:
            assert isinstance(ctx.env, RLLMSandbox) and len(_labelled(run_id)) == 1
            config = AgentConfig(base_url="http://127.0.0.1:9/v1", model="none", session_uid=f"{name}:0")
            episode = asyncio.run(run_agent_flow(flow, task, config, env=ctx.env))
            assert "[oracle error]" not in episode.trajectories[0].steps[0].output
            rewards[name] = ctx.evaluator.evaluate(task, episode).reward
        finally:
            ctx.run_teardown()
        assert not ctx.env.is_alive()
    assert rewards == {"hello": 1.0, "wrong": 0.0}
    # the run_id fixture then asserts 0 containers of this run are left


# --- the chat parser (its own module: scripts/test_rllm_conformance.sh collects test_rllm_<version>.py only) ---
from test_rllm_head_chat_parser import *  # noqa: E402,F401,F403
from test_rllm_head_harbor_rollouts import *  # noqa: E402,F401,F403
