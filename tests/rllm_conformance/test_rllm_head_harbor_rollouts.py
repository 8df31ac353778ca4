"""The rLLM Workflow's training rollouts as Harbor jobs, through rLLM HEAD's real ``AgentWorkflowEngine``.

Our ``TerminalTaskWorkflow`` runs real episodes in real Docker sandboxes (the shipped scripted model behind
``ModelClientRolloutEngine``, token ids from the embedded model's tokenizer). Steps are told apart as rLLM tells
them: the policy version each generation carries (``RolloutEngine.weight_version``, which rLLM's unified trainer
sets; verl's vLLM server stamps its ``global_steps`` the same way). A validation round is marked the way rLLM's
``execute_tasks_verl`` marks it (``rollout_engine.validate``). Every file written is validated with stock Harbor
0.25's own models (``JobConfig``, ``JobResult``, ``TrialResult``, the ATIF ``Trajectory``).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
from pathlib import Path

import pytest

from conftest import FINISH, SOLVE, TASK, RLLM_VERSION, flat_task
from harbor_reference import harbor_python
from terminal_agent.models.scripted import ScriptedModelClient

if not RLLM_VERSION.startswith("0.3"):
    pytest.skip(f"needs rLLM 0.3* (installed: {RLLM_VERSION})", allow_module_level=True)
pytestmark = pytest.mark.docker

from rllm.engine.agent_workflow_engine import AgentWorkflowEngine  # noqa: E402

from terminal_agent.training.verl.rllm_rollout_trials import close_rollout_recorders  # noqa: E402
from terminal_agent.training.verl.rllm_engines import ModelClientRolloutEngine  # noqa: E402
from terminal_agent.training.verl.rllm_workflow import TerminalTaskWorkflow  # noqa: E402

SOLVE_MARK = "(solve it)"
SOLVING_TASK = TASK.model_copy(update={"instruction": f"{TASK.instruction} {SOLVE_MARK}"})
EPSILON = 1e-6  # verl's GRPO epsilon

VALIDATE = r"""
import json, sys
from pathlib import Path
from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult
from harbor.models.trial.result import TrialResult
from harbor.models.trajectories import Trajectory
out = {}
for job in sorted(Path(sys.argv[1]).iterdir()):
    JobConfig.model_validate_json((job / "config.json").read_text())
    job_result = JobResult.model_validate_json((job / "result.json").read_text())
    assert job_result.finished_at is not None, job
    for trial in sorted(p for p in job.iterdir() if p.is_dir()):
        result = TrialResult.model_validate_json((trial / "result.json").read_text())
        trajectory = Trajectory.model_validate_json((trial / "agent" / "trajectory.json").read_text())
        out[f"{job.name}/{trial.name}"] = {
            "metadata": result.agent_result.metadata, "task": result.task_name,
            "rewards": result.verifier_result.rewards if result.verifier_result else None,
            "reward_txt": (trial / "verifier" / "reward.txt").read_text().strip(),
            "ctrf_tests": len(json.loads((trial / "verifier" / "ctrf.json").read_text())["results"]["tests"]),
            "n_trials": job_result.n_total_trials,
            "agent_steps": [s.model_dump(mode="json", exclude_none=True) for s in trajectory.steps if s.source == "agent"],
            "user_messages": [s.message for s in trajectory.steps if s.source == "user"]}
print(json.dumps(out))
"""


def scripted_by_instruction() -> ScriptedModelClient:
    """Solve the task whose instruction carries the mark, finish at once otherwise (0.25: /app exists)."""

    def reply(messages):
        solving = any(SOLVE_MARK in str(m.get("content")) for m in messages if m.get("role") == "user")
        answered = sum(1 for m in messages if m.get("role") == "assistant")
        return SOLVE if solving and answered == 0 else FINISH

    return ScriptedModelClient(reply)


def group(uid: str, *tasks) -> tuple[list[dict], list[str]]:
    """One GRPO group as rLLM's batch holds it: the same row uid repeated, one task dict per rollout."""
    return [flat_task(t) for t in tasks], [uid] * len(tasks)


def run_rounds(rounds, tmp_path, run_id, tokenizer, *, group_size=2, after_round=None, **settings):
    """Run rLLM's engine over ``rounds`` of (policy version, validating, [groups]); then close the recorders as the
    process exit does."""
    rollout_engine = ModelClientRolloutEngine(scripted_by_instruction(), tokenizer)
    harbor_rollouts = {"run_dir": str(tmp_path), "group_size": group_size, "model_name": "scripted",
                       "experiment": "conformance", **settings}
    engine = AgentWorkflowEngine(
        workflow_cls=TerminalTaskWorkflow,
        workflow_args={"env_args": {"run_id": run_id}, "harbor_rollouts": harbor_rollouts},
        rollout_engine=rollout_engine, n_parallel_tasks=2, retry_limit=1, raise_on_error=False,
    )

    async def all_rounds():
        for index, (version, validating, groups) in enumerate(rounds):
            rollout_engine.weight_version = version
            rollout_engine.validate = validating
            tasks = [t for g in groups for t in g[0]]
            ids = [i for g in groups for i in g[1]]
            await engine.execute_tasks(tasks, ids)
            if after_round is not None:
                after_round(index)

    try:
        asyncio.run(all_rounds())
    finally:
        engine.shutdown()
        close_rollout_recorders()


def validated_trials(rollouts: Path) -> dict:
    run = subprocess.run([str(harbor_python()), "-W", "ignore", "-c", VALIDATE, str(rollouts)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]  # Harbor's own models accept every file
    return json.loads(run.stdout)


@pytest.mark.slow
def test_workflow_rollouts_are_harbor_jobs_one_per_step(task_image, tokenizer, run_id, tmp_path):
    rounds = [
        (0, True, [group("val", TASK)]),  # validation before training: not a training rollout
        (0, False, [group("mixed", SOLVING_TASK, TASK), group("flat", TASK, TASK)]),  # step 1
        (1, False, [group("next", SOLVING_TASK, TASK)]),  # step 2: the weights after one update
    ]
    run_rounds(rounds, tmp_path, run_id, tokenizer)
    rollouts = tmp_path / "rollouts"
    assert sorted(p.name for p in rollouts.iterdir()) == ["step-000001", "step-000002"]
    trials = validated_trials(rollouts)
    assert len(trials) == 6  # 4 + 2; the validation episode is not among them
    by_group = {}
    for name, trial in trials.items():
        meta = trial["metadata"]
        job, trial_name = name.split("/")
        step = int(job[5:])
        assert trial_name == f"{job}__group-{meta['group']:02d}__episode-{meta['episode']}"
        assert meta["step"] == step and meta["policy_version"] == step - 1 and trial["n_trials"] == (4 if step == 1 else 2)
        assert meta["rllm_episode_id"] == f"{meta['rllm_group_id']}:{meta['episode']}" and meta["group_complete"] is True
        assert trial["task"] == TASK.task_id and meta["verl_rows"] == 1  # the turns merge into one row
        by_group.setdefault(meta["rllm_group_id"], {})[meta["episode"]] = trial
    assert sorted(by_group) == ["flat", "mixed", "next"]
    solved, plain = by_group["mixed"][0], by_group["mixed"][1]
    assert solved["rewards"]["reward"] == pytest.approx(1.0) and solved["reward_txt"] == "1"
    assert plain["rewards"]["reward"] == pytest.approx(0.25) and plain["ctrf_tests"] == 2
    for trial in (solved, plain):
        meta = trial["metadata"]
        assert meta["group_rewards"] == pytest.approx([1.0, 0.25]) and meta["trained"] is True
        # what verl's compute_advantage gives these rows: the Workflow gives the row's episodes one trajectory uid
        # (group_trajectory_uid), so they form one GRPO group: (reward - mean) / (sample std + epsilon)
        assert meta["trajectory_uid"] == "mixed:terminal_agent"
        spread = statistics.stdev([1.0, 0.25])
        expected = (trial["rewards"]["reward"] - 0.625) / (spread + EPSILON)
        assert meta["advantage"] == pytest.approx(expected, abs=1e-6)
        assert meta["group_advantages"][meta["episode"]] == meta["advantage"]
    assert by_group["flat"][0]["metadata"]["group_rewards"] == pytest.approx([0.25, 0.25])
    # the task as the model read it (the Workflow's trajectory.task is the whole dataset row, tests included)
    assert solved["user_messages"] == [SOLVING_TASK.instruction] and plain["user_messages"] == [TASK.instruction]
    assert "test_source" not in json.dumps(solved["user_messages"])
    agent_steps = solved["agent_steps"]
    assert [s["tool_calls"][0]["function_name"] for s in agent_steps] == ["bash", "finish"]
    assert agent_steps[0]["tool_calls"][0]["arguments"]["cmd"] == "echo hello > /app/hello.txt"
    assert agent_steps[0]["metrics"]["completion_token_ids"] and agent_steps[0]["metrics"]["prompt_token_ids"]
    assert by_group["next"][0]["metadata"]["step"] == 2


@pytest.mark.slow
def test_workflow_rollout_retention_every_nth_step_variance_only_and_a_disk_budget(task_image, tokenizer, run_id,
                                                                                   tmp_path):
    rounds = [
        (0, False, [group("g1", SOLVING_TASK, TASK), group("g2", TASK, TASK)]),  # step 1: g2's rewards agree
        (1, False, [group("g3", SOLVING_TASK, TASK)]),  # step 2
        (2, False, [group("g4", SOLVING_TASK, TASK)]),  # step 3: not a kept step (every 2nd)
        (3, False, [group("g5", SOLVING_TASK, TASK)]),  # step 4
    ]
    rollouts = tmp_path / "rollouts"
    seen: list[list[str]] = []
    first_step: dict = {}

    def after_round(index):
        seen.append(sorted(p.name for p in rollouts.iterdir()) if rollouts.is_dir() else [])
        if index == 0:
            first_step.update({p.name: json.loads((p / "result.json").read_text())["agent_result"]["metadata"]
                               for p in (rollouts / "step-000001").iterdir() if p.is_dir()})

    retention = {"every_n_steps": 2, "only_groups_with_variance": True, "max_disk_mb": 1e-6}
    run_rounds(rounds, tmp_path, run_id, tokenizer, after_round=after_round, retention=retention, rejection_sample=True)
    # step 1 kept, then each newer kept step pushed the older out of the (tiny) budget; step 3 was never written
    assert seen == [["step-000001"], ["step-000002"], ["step-000002"], ["step-000004"]]
    assert sorted(first_step) == ["step-000001__group-00__episode-0", "step-000001__group-00__episode-1"]
    assert {m["rllm_group_id"] for m in first_step.values()} == {"g1"}  # g2 (0.25, 0.25) has no variance
    for meta in first_step.values():
        # rLLM's rejection sampling reads is_correct (reward > 0): 1.0 and 0.25 are both "correct", so rLLM drops
        # the group; the trials say so, with no advantage, as the local trainer's dropped groups
        assert meta["rejected_by_rllm"] is True and meta["trained"] is False and meta["advantage"] is None
    trials = validated_trials(rollouts)
    assert sorted(trials) == [f"step-000004/step-000004__group-00__episode-{e}" for e in (0, 1)]
    assert all(t["metadata"]["policy_version"] == 3 for t in trials.values())
