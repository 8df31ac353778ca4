"""The advantages the rLLM rollout trials record are verl 0.9.1's own: ``core_algos.compute_grpo_outcome_advantage``
on the rows rLLM HEAD's verl transform builds (one row per run of prefix-extending turns, ``uid`` = the trajectory
uid), as ``AgentWorkflowPPOTrainer.fit_agent`` calls it."""

from __future__ import annotations

import pytest
import torch

from terminal_agent.training.verl.rllm_rollout_trials import RllmRolloutEpisode, rows_in_verl_batch, verl_path_advantages
from terminal_agent.outcome import EpisodeOutcome, Termination


def _episode(uid: str, index: int, reward: float | None, *, rows: int = 1, trajectory_uid: str | None = None):
    scored = reward is not None
    outcome = EpisodeOutcome(task_id="t", termination=Termination.FINISHED if scored else Termination.SANDBOX_ERROR,
                             scored=scored, reward=reward, error_kind=None if scored else "sandbox")
    return RllmRolloutEpisode(rllm_episode_id=f"{uid}:{index}", trajectory_uid=trajectory_uid or f"{uid}-traj-{index}",
                              policy_version=0, task_id="t", outcome=outcome, trajectory=None,
                              trained_rows=rows if scored else 0)


def _verl(verl_reference, episodes, norm_by_std):
    """verl's advantage of each episode's rows, built as rLLM's transform builds them."""
    rows = [(e, e.trajectory_uid) for e in episodes for _ in range(e.trained_rows)]
    rewards = torch.zeros(len(rows), 3)
    for i, (e, _) in enumerate(rows):
        rewards[i, -1] = float(e.outcome.reward)  # the score sits on the last response token
    [adv] = verl_reference.run([{"kind": "grpo", "token_level_rewards": rewards, "response_mask": torch.ones(len(rows), 3),
                                 "index": [uid for _, uid in rows], "epsilon": 1e-6, "norm_by_std": norm_by_std}])
    per_episode = {}
    for i, (e, _) in enumerate(rows):
        per_episode.setdefault(e.rllm_episode_id, set()).add(round(float(adv[i, 0]), 6))
    return per_episode


@pytest.mark.parametrize("norm_by_std", [True, False])
def test_recorded_advantages_are_verls_on_rllm_heads_rows(verl_reference, norm_by_std):
    head = [_episode("g", 0, 1.0), _episode("g", 1, 0.25), _episode("g", 2, 0.0), _episode("g", 3, None)]
    shared = [_episode("h", i, r, trajectory_uid="h", rows=2 if i == 1 else 1) for i, r in enumerate([1.0, 0.0, 0.5, 0.5])]
    for group in (head, shared):
        ours = verl_path_advantages(group, norm_by_std=norm_by_std)
        reference = _verl(verl_reference, group, norm_by_std)
        for episode, advantage in zip(group, ours):
            if not episode.trained_rows:
                assert advantage is None and episode.rllm_episode_id not in reference
                continue
            [value] = reference[episode.rllm_episode_id]  # every row of one trajectory gets one advantage
            assert advantage == pytest.approx(value, abs=1e-6)
    # with rLLM's default (a fresh uid per trajectory) each episode is a group of one: no baseline, never negative.
    # TerminalTaskWorkflow gives a row's episodes one uid (group_trajectory_uid), the `shared` case.
    assert verl_path_advantages(head)[:3] == pytest.approx([1.0 / (1 + 1e-6), 0.25 / (1 + 1e-6), 0.0])
    assert verl_path_advantages(head, adv_estimator="rloo") == [None] * 4  # no twin: nothing claimed


def test_rows_follow_rllms_prefix_merge():
    assert rows_in_verl_batch([[1, 2], [1, 2, 3, 4, 5]], [[3], [6]]) == 1  # turn 2 extends prompt + reply
    assert rows_in_verl_batch([[1, 2], [1, 9]], [[3], [6]]) == 2  # history rewritten: a new row
    assert rows_in_verl_batch([], []) == 0
