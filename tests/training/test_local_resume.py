"""Resume and faults: a checkpoint restores adapter, optimizer, RNG and data order; a run killed
mid-step leaves no containers and resumes from its last checkpoint with the same data order."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from local_helpers import shipped_tasks
from terminal_agent.training.local.checkpoints import TaskOrder, latest_checkpoint, load_adapter_weights, load_checkpoint, save_checkpoint, set_rng_state
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.demonstration_client import DemonstrationClient
from terminal_agent.training.local.metrics import read_metrics
from terminal_agent.training.local.policy import load_policy
from terminal_agent.training.local.update import TrainingRow, grpo_update

HERE = Path(__file__).resolve().parent


def test_task_order_continues_bitwise_after_a_restore():
    straight = TaskOrder(7, seed=11)
    reference = [straight.next_batch(3) for _ in range(6)]  # crosses epochs
    first = TaskOrder(7, seed=11)
    head = [first.next_batch(3) for _ in range(2)]
    resumed = TaskOrder.from_state(first.state_dict())
    tail = [resumed.next_batch(3) for _ in range(4)]
    assert head + tail == reference
    assert sorted(sum(reference[:7 // 3 + 1], [])[:7]) == list(range(7))  # each epoch is a permutation
    assert TaskOrder(7, seed=12).next_batch(7) != TaskOrder(7, seed=11).next_batch(7)


@pytest.mark.model
def test_checkpoint_restores_adapter_optimizer_and_rng(tmp_path):
    config = LocalTrainingConfig(num_threads=1, lr=1e-2)
    policy = load_policy(config)
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=config.lr)
    client = DemonstrationClient(policy.model, policy.tokenizer, ["<bash>\ncmd: ls\n</bash>", "<finish>\nmessage: x\n</finish>"])
    rows = []
    for i, adv in enumerate([1.0, -1.0]):
        r = client.complete([{"role": "user", "content": f"list the files {i}"}])
        rows.append(TrainingRow(r.prompt_ids, r.completion_ids, [1] * len(r.completion_ids), r.logprobs, adv, 0, i, [0]))
    stats = grpo_update(policy.model, optimizer, rows, config.actor_loss_config(), temperature=1.0, grad_clip=1.0, pad_id=2)
    assert stats.stepped
    order = TaskOrder(5, seed=3)
    order.next_batch(2)
    path = save_checkpoint(tmp_path, 4, policy.model, optimizer, order)
    adapter, opt_state = policy.adapter_state(), optimizer.state_dict()
    draws = (random.random(), np.random.rand(), torch.rand(3))
    continuation = order.next_batch(4)

    fresh = load_policy(config)
    assert any(not torch.equal(fresh.adapter_state()[k], adapter[k]) for k in adapter)
    fresh_opt = torch.optim.AdamW(fresh.trainable_parameters(), lr=config.lr)
    ck = load_checkpoint(latest_checkpoint(tmp_path))
    assert ck.path == path and ck.step == 4
    load_adapter_weights(fresh.model, ck.path)
    fresh_opt.load_state_dict(ck.optimizer)
    set_rng_state(ck.rng)
    for key, value in adapter.items():
        assert torch.equal(fresh.adapter_state()[key], value), key
    for pid, state in opt_state["state"].items():
        for name, tensor in state.items():
            assert torch.equal(fresh_opt.state_dict()["state"][pid][name], tensor), (pid, name)
    assert (random.random(), np.random.rand()) == draws[:2] and torch.equal(torch.rand(3), draws[2])
    assert TaskOrder.from_state(ck.task_order).next_batch(4) == continuation


def _containers_of(docker_client, pid: int) -> list:
    # sparse: the list alone, no inspect per container - one that the daemon removes between the two is gone, not an error
    return docker_client.containers.list(all=True, sparse=True, filters={"label": [f"terminal-agent.owner-pid={pid}"]})


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_killed_run_leaves_no_containers_and_resumes_from_its_last_checkpoint(docker_client, tmp_path):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    for task in shipped_tasks("fix-stats-script", "count-log-levels"):
        ensure_task_image(task)
    run_dir = tmp_path / "run"
    env = {**os.environ, "WANDB_MODE": "offline"}
    child = subprocess.Popen([sys.executable, str(HERE / "local_training_child.py"), str(run_dir), "2"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        # wait for step 1's checkpoint, then for step 2's containers: the kill lands mid-step
        while not (run_dir / "checkpoints" / "step_000001" / "trainer_state.pt").exists():
            assert child.poll() is None, child.stderr.read()[-3000:]
            assert time.monotonic() < deadline, "step 1 never finished"
            time.sleep(0.5)
        while not _containers_of(docker_client, child.pid):
            assert child.poll() is None, "the run ended before step 2 started a container"
            assert time.monotonic() < deadline
            time.sleep(0.2)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    gone_by = time.monotonic() + 60
    while _containers_of(docker_client, child.pid) and time.monotonic() < gone_by:
        time.sleep(0.5)
    assert _containers_of(docker_client, child.pid) == [], "the killed run left labelled containers"
    assert [r["step"] for r in read_metrics(run_dir)] == [1]

    resumed = subprocess.run([sys.executable, str(HERE / "local_training_child.py"), str(run_dir), "2"], env=env,
                             capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary["resumed_from"] == 1 and summary["steps_this_session"] == 1
    assert summary["optimizer_steps"] == 1  # the resumed step trained (its group had reward variance)
    records = read_metrics(run_dir)
    assert [r["step"] for r in records] == [1, 2]
    # the data order of the interrupted-and-resumed run is the uninterrupted one
    sys.path.insert(0, str(HERE))
    from local_training_child import SEED, TASK_IDS

    order = TaskOrder(len(TASK_IDS), seed=SEED)
    expected = [[TASK_IDS[i] for i in order.next_batch(1)] for _ in range(2)]
    assert [r["task_ids"] for r in records] == expected
    assert load_checkpoint(latest_checkpoint(run_dir)).step == 2
