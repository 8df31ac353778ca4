"""The local trainer's rollouts as Harbor jobs: two real GRPO steps (real Docker sandboxes, grader, embedded model
with LoRA) keep their episodes as trials named by step, group and episode, with the group's rewards and advantages
and the policy version in the trial metadata, every file valid to stock Harbor 0.25's own models; the retention
policy (every Nth step, groups with reward variance, a disk budget) decides what stays."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from local_helpers import alternating_client_factory, shipped_tasks
from terminal_agent.harbor_jobs.training_trials import RolloutTrialsConfig, TrainingRolloutWriter
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.trainer import train_local

ROOT = Path(__file__).resolve().parents[2]
NO_PYTHON_312 = 3

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
    JobResult.model_validate_json((job / "result.json").read_text())
    for trial in sorted(p for p in job.iterdir() if (p / "result.json").is_file()):
        result = TrialResult.model_validate_json((trial / "result.json").read_text())
        trajectory = Trajectory.model_validate_json((trial / "agent" / "trajectory.json").read_text())
        out[f"{job.name}/{trial.name}"] = {"metadata": result.agent_result.metadata, "task": result.task_name,
            "rewards": result.verifier_result.rewards if result.verifier_result else None,
            "agent_steps": [s.model_dump(mode="json", exclude_none=True) for s in trajectory.steps if s.source == "agent"]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def harbor_python() -> Path:
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup_harbor_venv.sh")], capture_output=True, text=True, timeout=900)
    if run.returncode == NO_PYTHON_312:
        pytest.skip("no Python 3.12 on this machine: stock Harbor cannot be installed")
    assert run.returncode == 0, run.stderr[-2000:]
    return Path(run.stdout.strip().splitlines()[-1])


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_two_training_steps_are_kept_as_harbor_trials(docker_client, harbor_python, tmp_path):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    (task,) = shipped_tasks("fix-stats-script")
    ensure_task_image(task)
    config = LocalTrainingConfig(
        group_size=2, tasks_per_step=1, episode=EpisodeSpec.small(2), steps=2, num_threads=1, micro_batch_tokens=2048,
        lr=1e-3, experiment="harbor-rollouts", wandb=False, harbor_rollouts=RolloutTrialsConfig(every_n_steps=2),
    )
    train_local(config, [task], tmp_path, client_factory=alternating_client_factory([task]))
    rollouts = tmp_path / "rollouts"
    assert sorted(p.name for p in rollouts.iterdir()) == ["step-000001", "step-000002"]
    run = subprocess.run([str(harbor_python), "-W", "ignore", "-c", VALIDATE, str(rollouts)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]  # Harbor's own models accept every file
    trials = json.loads(run.stdout)
    assert sorted(trials) == [f"step-00000{s}/step-00000{s}__group-00__episode-{e}" for s in (1, 2) for e in (0, 1)]
    for name, trial in trials.items():
        meta = trial["metadata"]
        step = int(name[5:11])
        assert meta["step"] == step and meta["group"] == 0 and meta["policy_version"] == step - 1
        assert trial["task"] == task.task_id and len(meta["group_rewards"]) == 2
        # the demonstrations alternate oracle / finish-at-once: the group has variance and both samples trained
        assert sorted(meta["group_rewards"]) == [0.0, 1.0] and meta["trained"] is True
        assert meta["advantage"] == meta["group_advantages"][meta["episode"]]
        assert (meta["advantage"] > 0) == (trial["rewards"]["reward"] == 1.0)
        first = trial["agent_steps"][0]
        assert first["metrics"]["completion_token_ids"] and len(first["metrics"]["logprobs"]) == len(first["metrics"]["completion_token_ids"])
        assert first["tool_calls"][0]["function_name"] in {"bash", "finish"}


def _record(task_id: str, reward: float, attempt: int):
    """A real EpisodeRecord of a scored episode (no trajectory: an episode seen only through its verdict)."""
    from terminal_agent.outcome import EpisodeOutcome, Termination
    from terminal_agent.rollout.episode_record import EpisodeRecord

    outcome = EpisodeOutcome(task_id=task_id, termination=Termination.FINISHED, scored=True, reward=reward, test_score=reward)
    return EpisodeRecord(outcome=outcome, attempt=attempt, wall_s=1.0)


def test_retention_keeps_every_nth_step_groups_with_variance_and_a_disk_budget(tmp_path):
    from terminal_agent.training.algorithms.group_selection import select_groups
    from terminal_agent.training.local.update import build_rows

    groups = [[_record("flat", 1.0, 0), _record("flat", 1.0, 1)], [_record("mixed", 0.0, 0), _record("mixed", 1.0, 1)]]
    outcomes = [[r.outcome for r in g] for g in groups]
    selection = select_groups(outcomes)
    _, advantages = build_rows(outcomes, selection)
    writer = TrainingRolloutWriter(tmp_path, RolloutTrialsConfig(every_n_steps=3, only_groups_with_variance=True),
                                   model_name="policy", experiment="retention")
    assert [step for step in range(1, 8) if writer.wants(step)] == [1, 3, 6]
    job = writer.write_step(3, groups, selection, advantages)
    assert writer.write_step(4, groups, selection, advantages) is None
    assert sorted(p.name for p in job.iterdir() if p.is_dir()) == ["step-000003__group-01__episode-0", "step-000003__group-01__episode-1"]
    meta = json.loads((job / "step-000003__group-01__episode-1" / "result.json").read_text())["agent_result"]["metadata"]
    assert meta["group_rewards"] == [0.0, 1.0] and meta["advantage"] > 0 > meta["group_advantages"][0]

    one_step_mb = sum(p.stat().st_size for p in job.rglob("*") if p.is_file()) / 2**20
    budget = TrainingRolloutWriter(tmp_path, RolloutTrialsConfig(max_disk_mb=one_step_mb * 2.5), model_name="policy",
                                   experiment="retention")
    for step in (5, 6, 7, 8):
        budget.write_step(step, groups, selection, advantages)
    kept = sorted(p.name for p in (tmp_path / "rollouts").iterdir())
    assert kept[-1] == "step-000008" and "step-000003" not in kept and len(kept) <= 3  # the oldest went first
