"""Sandboxes started ahead of time: the trainer prepares step k+1's envs while step k updates, so the next
step's first model calls do not wait for container starts. Real Docker containers, the real env and grader."""

from __future__ import annotations

import time

import pytest

from local_helpers import alternating_client_factory, shipped_tasks
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.sandbox import labels
from terminal_agent.training.local.checkpoints import TaskOrder
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.rollouts import LocalRolloutCollector, default_env_factory


def test_peek_batch_shows_the_next_draw_without_taking_it():
    order = TaskOrder(5, seed=3)
    order.next_batch(3)
    peeked = order.peek_batch(4)  # crosses into the next epoch
    state = order.state_dict()
    assert order.next_batch(4) == peeked and state != order.state_dict()


def _containers(docker_client, run_id: str) -> list:
    return docker_client.containers.list(all=True, filters={"label": f"{labels.RUN_ID}={run_id}"})


@pytest.mark.docker
@pytest.mark.model
def test_prepared_envs_are_taken_by_the_episodes_and_the_rest_are_closed(docker_client):
    from terminal_agent.training.local.policy import load_policy

    (task,) = shipped_tasks("fix-stats-script")
    # one turn: the reference solution's episode is graded after its command (1.0), the other finishes at once
    config = LocalTrainingConfig(group_size=2, tasks_per_step=1, episode=EpisodeSpec.small(1), steps=2, num_threads=1,
                                 wandb=False)
    built: list = []

    def counting_factory(task, config, run_id):  # noqa: ANN001 - the collector's EnvFactory seam
        env = default_env_factory(task, config, run_id)
        built.append(env)
        return env

    policy = load_policy(config)
    client = alternating_client_factory([task])(policy, config)
    run_id = f"prepare-test-{time.monotonic_ns()}"
    collector = LocalRolloutCollector(client, config, run_id=run_id, env_factory=counting_factory)
    try:
        assert collector.prepare([task], 1) == 2
        batch = collector.collect([task], 1)
        # both episodes ran in the envs started ahead of time: no third or fourth env was built
        assert len(built) == 2 and collector.prepared_taken == 2 and collector.prepared_failed == 0
        rewards = sorted(r.outcome.reward for r in batch.groups[0])
        assert all(r.outcome.scored for r in batch.groups[0]) and rewards[-1] == 1.0 and rewards[0] < 1.0
        # the agent's clock started with the episode, not when its sandbox did
        assert all(r.outcome.termination.value != "agent_timeout" for r in batch.groups[0])

        # prepared for a step that never runs: closed by close(), nothing left behind
        collector.prepare([task], 2)
        deadline = time.monotonic() + 60
        while len(_containers(docker_client, run_id)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_containers(docker_client, run_id)) == 2
    finally:
        collector.close()
    assert _containers(docker_client, run_id) == []
    assert collector.prepared_taken == 2  # the discarded ones were never counted as taken
