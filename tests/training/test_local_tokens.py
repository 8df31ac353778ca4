"""Token in, token out, on a real sampled episode (embedded policy, real sandbox and grader):
the trained tokens decode to exactly the assistant turns, and the trainer's logprobs of those
tokens agree with the sampler's.

Tolerance: at most 1e-4 per token (float32 on CPU; the two passes differ only in summation order:
incremental decoding with a KV cache versus one teacher-forced forward)."""

from __future__ import annotations

import pytest
import torch

from local_helpers import shipped_tasks
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.training.algorithms import select_groups
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.policy import load_policy, make_policy_client
from terminal_agent.training.local.rollouts import LocalRolloutCollector
from terminal_agent.training.local.update import build_rows, forward_response_logprobs, pack_rows

pytestmark = [pytest.mark.docker, pytest.mark.model, pytest.mark.slow]

LOGPROB_TOLERANCE = 1e-4


def _segments(mask: list[int]) -> list[tuple[int, int]]:
    out, start = [], None
    for i, m in enumerate(mask + [0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i))
            start = None
    return out


@pytest.fixture(scope="module")
def sampled(docker_client):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    (task,) = shipped_tasks("count-log-levels")
    ensure_task_image(task)
    config = LocalTrainingConfig(group_size=2, episode=EpisodeSpec.small(2, max_tokens_per_turn=40), num_threads=1,
                                 seed=3)
    policy = load_policy(config)
    collector = LocalRolloutCollector(make_policy_client(policy, config), config, run_id="test-local-tokens")
    batch = collector.collect([task], step=1)
    return task, policy, config, batch


def test_masked_tokens_decode_to_exactly_the_assistant_turns(sampled):
    task, policy, _config, batch = sampled
    (group,) = batch.groups
    outcomes = [r.outcome for r in group]
    assert all(o.trainable for o in outcomes), [o.error for o in outcomes]
    selection = select_groups([outcomes], reject_zero_variance=False)
    rows, _ = build_rows([outcomes], selection)
    tok = policy.tokenizer
    for record in group:
        mine = [r for r in rows if r.sample == record.attempt]
        assert sum(len(r.turns) for r in mine) == len(record.texts) == len(record.outcome.turn_tokens) >= 1
        decoded = []
        for row in mine:
            packed = pack_rows([row], pad_id=policy.pad_id)
            mask = packed.loss_mask_over_input()[0].tolist()
            ids = packed.input_ids[0].tolist()
            spans = _segments([int(m) for m in mask])
            assert len(spans) == len(row.turns)
            decoded += [tok.decode(ids[a:b], skip_special_tokens=True) for a, b in spans]
            untrained = tok.decode([i for i, m in zip(ids, mask) if not m], skip_special_tokens=True)
            assert task.instruction.strip()[:60] in untrained  # the prompt is there, and not trained
        assert tuple(decoded) == record.texts


def test_sampler_and_trainer_logprobs_agree(sampled):
    _task, policy, config, batch = sampled
    outcomes = [r.outcome for r in batch.groups[0]]
    rows, _ = build_rows([outcomes], select_groups([outcomes], reject_zero_variance=False))
    worst = 0.0
    policy.model.eval()
    for row in rows:
        packed = pack_rows([row], pad_id=policy.pad_id)
        with torch.no_grad():
            trainer, _ = forward_response_logprobs(policy.model, packed, config.temperature)
        mask = packed.response_mask[0].bool()
        sampler = torch.tensor(row.old_logprobs)[-mask.shape[0]:]
        diff = (trainer[0][mask] - sampler[mask]).abs()
        assert diff.numel() == row.trained_tokens > 0
        worst = max(worst, float(diff.max()))
    assert worst <= LOGPROB_TOLERANCE, f"sampler/trainer logprob gap {worst:.2e} > {LOGPROB_TOLERANCE:.0e}"


def test_the_trainer_samples_through_the_continuous_sampler(sampled):
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient
    from terminal_agent.training.local.policy import make_policy_client

    _, policy, config, _ = sampled
    client = make_policy_client(policy, config)
    assert isinstance(client, ContinuousBatchingClient) and client.model is policy.model  # no copy to sync
    client.close()
