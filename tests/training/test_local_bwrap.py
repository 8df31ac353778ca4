"""The local trainer and the learning experiment on the bwrap backend (no Docker daemon in the loop):
the preset's ``sandbox`` section reaches the trainer, the SFT warm start, the GRPO rollouts and the
held-out evaluations; a task missing from the export is skipped with the command that makes one.

The export is made once from the local daemon's images (``bwrap_support``); everything after that
runs from the export alone, as on a GPU node without Docker.
"""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest

from local_helpers import alternating_client_factory, shipped_tasks
from terminal_agent.errors import ConfigError
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.sandbox.bwrap import state as bwrap_state
from terminal_agent.sandbox.labels import OWNER_PID, owner_labels
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.preset_config import load_preset


def test_preset_sandbox_section_reaches_the_local_config(tmp_path):
    preset = load_preset("local_1gpu", ["sandbox.backend=bwrap", f"sandbox.env.sandbox.bwrap.images_dir={tmp_path}"])
    config = LocalTrainingConfig.from_preset(preset)
    sandbox = config.episode.env.sandbox
    assert sandbox.backend == "bwrap" and sandbox.bwrap.images_dir == str(tmp_path)
    assert config.concurrency == preset.agent.parallel_episodes == 32
    assert LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke")).episode.env.sandbox.backend == "docker"


def test_bad_sandbox_settings_in_a_preset_name_the_key():
    preset = load_preset("local_1gpu", ["sandbox.env.sandbox.bwrap.no_such_key=1"])
    with pytest.raises(ConfigError, match="no_such_key"):
        LocalTrainingConfig.from_preset(preset)


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_one_step_on_bwrap_skips_a_task_missing_from_the_export(docker_client, tmp_path):
    """A GRPO step whose group has reward variance (the demonstration driver) on bwrap. The SFT warm start on
    bwrap is checked in the learning experiment below (one warm start for both: each is a CPU run of the model)."""
    import torch

    from bwrap_support import bwrap_config
    from terminal_agent.training.local.metrics import read_metrics
    from terminal_agent.training.local.policy import load_policy
    from terminal_agent.training.local.trainer import train_local

    (task,) = shipped_tasks("fix-stats-script")
    sandbox = bwrap_config([task])
    missing = task.model_copy(update={"task_id": "not-exported", "instruction": task.instruction + " (variant)",
                                      "dockerfile": task.dockerfile + "\nRUN echo variant > /tmp/variant\n"})
    config = LocalTrainingConfig(
        group_size=2, tasks_per_step=2, episode=EpisodeSpec.small(2, sandbox=sandbox), steps=1, num_threads=1,
        micro_batch_tokens=2048, lr=1e-3, experiment="bwrap-step", wandb=False,
    )
    # a sandbox a dead run left in this state dir: the trainer sweeps it like every run (the one leak policy)
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = {**owner_labels("dead-local-run", 3600), OWNER_PID: str(dead.pid)}
    state_root = bwrap_state.state_root(sandbox.bwrap.state_dir)
    leaked = bwrap_state.create_sandbox_directory(state_root, f"bw-{uuid.uuid4().hex[:12]}",
                                                  {"labels": labels, "cgroups": []})
    policy = load_policy(config)
    summary = train_local(config, [task, missing], tmp_path, policy=policy,
                          client_factory=alternating_client_factory([task, missing]))
    assert not leaked.exists()

    # the task the export lacks is skipped, with how to export it; the run goes on
    why = summary.skipped_tasks["not-exported"]
    assert "ImageNotAvailableError" in why and "images export" in why
    (record,) = read_metrics(tmp_path)
    assert record["rollout/scored"] == 2 and record["rollout/reward_std"] > 0
    assert record["update/stepped"] == 1
    assert torch.isfinite(torch.tensor(record["actor/grad_norm"]))


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_learning_experiment_evaluates_base_warm_start_and_trained_on_bwrap(docker_client, tmp_path):
    from bwrap_support import bwrap_config
    from terminal_agent.evaluation.results import RunResults
    from terminal_agent.tasks.families import generate_instances
    from terminal_agent.training.local.checkpoints import warm_start_checkpoint

    # the smallest shape (CPU time in CI): one train task (its warm start and its step), two held-out tasks (a
    # paired comparison), one turn of 16 tokens per episode; the phases and files checked do not depend on size
    train = generate_instances("count-matches", 1, 1, split="train", difficulties=["easy"])
    held = generate_instances("count-matches", 2, 2, split="held_out", difficulties=["easy"])
    sandbox = bwrap_config(train + held)
    config = LocalTrainingConfig(
        group_size=2, tasks_per_step=1, episode=EpisodeSpec.small(1, sandbox=sandbox, max_tokens_per_turn=16), steps=1,
        num_threads=1, micro_batch_tokens=2048, experiment="bwrap-experiment", sft_enabled=True, sft_epochs=1,
        wandb=False,
    )
    from terminal_agent.training.experiments.local_experiment import run_learning_experiment

    result = run_learning_experiment(config, train, held, tmp_path, eval_attempts=1, eval_concurrency=2, n_boot=200)
    # the warm start ran its demonstration on bwrap and kept its adapter apart from the pruned checkpoints
    assert result.training.sft is not None and result.training.sft["tasks_used"] == [train[0].task_id], result.training.sft
    warm = warm_start_checkpoint(tmp_path / "train")
    assert warm is not None and (warm / "adapter" / "adapter_config.json").is_file()
    assert result.warm_start_results is not None
    for path in (result.base_results, result.warm_start_results, result.trained_results):
        run = RunResults.read(path)
        assert sorted(t.task_id for t in run.trials) == sorted(t.task_id for t in held)
        assert all(t.scored for t in run.trials), [t.error for t in run.trials if not t.scored]
    assert {"reward", "pass", "grpo_reward", "grpo_pass", "sft_reward", "sft_pass"} <= set(result.comparisons)
    assert "GRPO's own effect" in (tmp_path / "comparison.md").read_text()
    from terminal_agent.training.local.metrics import read_metrics

    (record,) = read_metrics(tmp_path / "train")  # the policy's own batched sampler ran the GRPO step
    assert record["sampler/busy_s"] > 0 and record["sampler/tokens"] > 0 and record["sampler/mean_batch"] >= 1
    assert 0.0 <= record["time/policy_idle_share"] < 1.0
    splits = json.loads((tmp_path / "splits.json").read_text())
    assert not set(splits["train"]) & set(splits["held_out"])
