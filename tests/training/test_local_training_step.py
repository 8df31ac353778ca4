"""One real short local GRPO run: real Docker sandboxes, the real grader, the real embedded model
(LoRA via peft), wandb offline. The replies are demonstrations (reference solution / finish at
once, alternately) so the group has reward variance; their tokens and logprobs come from the policy.

The same run also validates on a held-out task before training and after its step (trainer.test_freq,
val_before_train): one run of the embedded model on CPU for both, as each costs most of a minute of CPU."""

from __future__ import annotations

import json

import pytest
import torch

from local_helpers import alternating_client_factory, shipped_tasks
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.metrics import read_metrics
from terminal_agent.training.local.policy import load_policy
from terminal_agent.training.local.trainer import train_local

pytestmark = [pytest.mark.docker, pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def tasks(docker_client):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    chosen = shipped_tasks("fix-stats-script", "count-log-levels")
    for task in chosen:
        ensure_task_image(task)
    return chosen


def test_one_step_changes_the_adapter_and_writes_metrics_checkpoint_wandb_and_val_metrics(tasks, tmp_path):
    """Besides the step: step 0 (val_before_train) and step 1 (test_freq=1) validate on the held-out task
    through the real env and grader. The demonstration client answers a task's first episode with the
    reference solution and its second with an immediate finish, so the two passes must differ."""
    task, held_out = tasks
    broken = task.model_copy(update={"task_id": "broken-image", "dockerfile": "FROM terminal-agent/base:bookworm\nRUN exit 3\n"})
    config = LocalTrainingConfig(
        group_size=2, tasks_per_step=2, episode=EpisodeSpec.small(2), steps=1, num_threads=1, micro_batch_tokens=2048,
        lr=1e-3, experiment="step-test", test_freq=1, val_before_train=True, val_n=1,
    )
    policy = load_policy(config)
    before = {k: v.clone() for k, v in policy.adapter_state().items()}
    summary = train_local(
        config, [task, broken], tmp_path, policy=policy, val_tasks=[held_out],
        client_factory=alternating_client_factory([task, held_out]),
    )
    after = policy.adapter_state()
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert any("lora_B" in k for k in changed), "the GRPO step left every LoRA B matrix at its zero init"

    # the task whose image cannot be built was skipped with a message; the step went on
    assert "broken-image" in summary.skipped_tasks and "Image" in summary.skipped_tasks["broken-image"]
    validation, record = read_metrics(tmp_path)
    assert record["step"] == 1 and record["batch/skipped_tasks"] == 1
    assert record["rollout/episodes"] == 2 and record["rollout/scored"] == 2
    assert record["rollout/reward_std"] > 0 and record["rollout/pass_rate"] == pytest.approx(0.5)
    assert record["batch/groups_kept"] == 1 and record["update/stepped"] == 1
    assert record["update/trained_tokens"] > 0 and record["actor/grad_norm"] > 0
    # same weights sample and train: the ratio starts at 1 up to float rounding
    assert record["actor/sampler_trainer_logprob_diff"] < 1e-3
    # the group's forward and backward ran as soon as it was graded (streamed): the update's own work is all
    # counted, and what ran after the rollouts is at most the whole step's remainder
    assert record["time/update_s"] > 0 and record["time/update_overlap_s"] >= 0
    assert record["time/update_after_rollouts_s"] <= record["time/step_s"] - record["time/rollout_wall_s"] + 1e-3

    checkpoint = tmp_path / "checkpoints" / "step_000001"
    assert summary.checkpoint == checkpoint
    assert (checkpoint / "adapter" / "adapter_config.json").is_file()
    state = torch.load(checkpoint / "trainer_state.pt", weights_only=False)
    assert state["step"] == 1 and state["optimizer"]["state"], "the optimizer state is empty"
    assert (tmp_path / "curves.png").stat().st_size > 1000
    assert summary.wandb_dir is not None and summary.wandb_dir.parent == tmp_path / "wandb"
    assert list(summary.wandb_dir.glob("run-*.wandb")), "no offline wandb run file"
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert sorted(lines[1]["task_ids"]) == ["broken-image", task.task_id]

    # validation: the baseline as step 0, then step 1's pass on the step's own line
    assert validation["step"] == 0 and "rollout/reward_mean" not in validation
    assert (validation["val/tasks"], validation["val/episodes"], validation["val/scored"]) == (1, 1, 1)
    assert validation["val/pass_rate"] == 1.0 and validation["val/reward_mean"] == pytest.approx(1.0)
    assert record["val/pass_rate"] == 0.0 and record["val/reward_mean"] < 1.0
    assert [line["step"] for line in lines] == [0, 1]  # step 1's val/ figures are on its one line
