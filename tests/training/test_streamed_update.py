"""A streamed update (rows added group by group, normalised once at the end) takes the same step as
the whole batch's loss with its real normalisers, under every ``loss_agg_mode``.

The reference below is written out here, not taken from the trainer: each micro-batch's loss is
``actor_loss`` with the whole batch's token count, row count and ``loss_scale_factor`` passed in,
and the gradients are summed by ``backward``. With SGD at lr 1 and no effective clip, the change of
each trained weight is minus its gradient, so a wrong normaliser (or a part left out) shows up
directly in the weights (AdamW's first step would hide a scale error: it divides by the gradient's
own size).
"""

from __future__ import annotations

import pytest
import torch

from terminal_agent.training.algorithms.policy_loss import (
    LOSS_AGG_MODES,
    ActorLossConfig,
    actor_loss,
    aggregate_loss,
    loss_normaliser,
)
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.policy import load_policy
from terminal_agent.training.local.update import (
    StreamedUpdate,
    TrainingRow,
    forward_response_logprobs,
    grpo_update,
    pack_rows,
    response_tensor,
)

# float32 on the CPU: the streamed and reference passes differ only in summation order
GRADIENT_TOLERANCE = 1e-5

_policy: list[object] = []


def policy():
    if not _policy:
        config = LocalTrainingConfig(device="cpu", dtype="float32", lora_rank=8, lora_alpha=16, seed=0,
                                     lora_target_modules=["q_proj", "v_proj"])
        _policy.append(load_policy(config))
    return _policy[0]


def group_rows(group: int, shapes: list[tuple[int, int]], advantages: list[float], seed: int) -> list[TrainingRow]:
    g = torch.Generator().manual_seed(seed)
    rows = []
    for i, ((prompt, response), adv) in enumerate(zip(shapes, advantages)):
        ids = torch.randint(0, 49152, (prompt + response,), generator=g).tolist()
        mask = [1] * response
        if i == 0:
            mask[5:9] = [0] * 4  # a merged multi-turn row's masked gap
        old = (torch.randn(response, generator=g) * 0.1 - 4.0).tolist()
        rows.append(TrainingRow(ids[:prompt], ids[prompt:], mask, [o if m else 0.0 for o, m in zip(old, mask)],
                                advantage=adv, group=group, sample=i))
    return rows


GROUPS = [
    group_rows(0, [(16, 14), (10, 9)], [1.0, -1.0], seed=1),
    group_rows(1, [(12, 10), (8, 16), (14, 6)], [0.7, -0.2, -0.5], seed=2),
]


def trained_params(model) -> list[torch.Tensor]:
    return [p for p in model.parameters() if p.requires_grad]


def reference_gradients(model, rows: list[TrainingRow], config: ActorLossConfig, pad_id: int) -> list[torch.Tensor]:
    tokens = sum(r.trained_tokens for r in rows)
    scale = config.loss_scale_factor or max(len(r.response_ids) for r in rows)
    config = ActorLossConfig(loss_agg_mode=config.loss_agg_mode, loss_scale_factor=scale)
    for p in trained_params(model):
        p.grad = None
    model.train()
    for part in ([r] for r in rows):  # one row a micro-batch: a packing the update does not use
        packed = pack_rows(part, pad_id)
        width = packed.response_width
        old = response_tensor(part, [r.old_logprobs for r in part], width)
        adv = response_tensor(part, [[r.advantage] * len(r.response_ids) for r in part], width)
        logprobs, _ = forward_response_logprobs(model, packed, 1.0)
        loss, _ = actor_loss(old, logprobs, adv, packed.response_mask, config,
                             batch_num_tokens=float(tokens), global_batch_size=float(len(rows)))
        loss.backward()
    grads = [p.grad.detach().clone() for p in trained_params(model)]
    for p in trained_params(model):
        p.grad = None
    return grads


def step_delta(model, run) -> list[torch.Tensor]:
    """Minus the gradient each weight got: SGD at lr 1, weights put back afterwards."""
    before = [p.detach().clone() for p in trained_params(model)]
    optimizer = torch.optim.SGD(trained_params(model), lr=1.0)
    stats = run(optimizer)
    after = [p.detach().clone() for p in trained_params(model)]
    with torch.no_grad():
        for p, b in zip(trained_params(model), before):
            p.copy_(b)
    assert stats.stepped and not stats.skipped
    return [b - a for a, b in zip(after, before)]


def max_gap(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


@pytest.mark.parametrize("mode", LOSS_AGG_MODES)
def test_the_unnormalised_loss_over_the_normaliser_is_the_batch_loss(mode):
    """Every mode, on random micro-batches: sum of unit-normalised parts / loss_normaliser = the batch's loss."""
    g = torch.Generator().manual_seed(0)
    parts = [(torch.randn(3, 7, generator=g), (torch.rand(3, 7, generator=g) > 0.3).float()),
             (torch.randn(2, 11, generator=g), (torch.rand(2, 11, generator=g) > 0.3).float())]
    tokens = sum(float(m.sum()) for _, m in parts)
    rows = sum(int((m.sum(-1) > 0).sum()) for _, m in parts)
    scale = 11.0
    real = sum(aggregate_loss(x, m, mode, batch_num_tokens=tokens, global_batch_size=rows, loss_scale_factor=scale)
               for x, m in parts)
    unit = sum(aggregate_loss(x, m, mode, batch_num_tokens=1.0, global_batch_size=1.0, loss_scale_factor=1.0)
               for x, m in parts)
    normaliser = loss_normaliser(mode, tokens=tokens, rows=rows, loss_scale_factor=scale)
    assert float(unit) / normaliser == pytest.approx(float(real), rel=1e-6)
    if mode != "token-sum":
        assert normaliser > 1.0  # a normaliser left at 1 would fail the equality above


@pytest.mark.model
@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-sum-norm"])
def test_streamed_update_takes_the_whole_batch_step(mode):
    pol = policy()
    model, pad = pol.model, pol.pad_id
    config = ActorLossConfig(loss_agg_mode=mode)
    rows = [r for group in GROUPS for r in group]
    reference = reference_gradients(model, rows, config, pad)
    assert max(float(g.abs().max()) for g in reference) > 0.0

    def streamed(optimizer):
        update = StreamedUpdate(model, optimizer, config, temperature=1.0, grad_clip=1e12, pad_id=pad,
                                micro_batch_tokens=64)
        for group in GROUPS:  # as the trainer feeds it: one graded group at a time
            update.add(group)
        stats = update.finish()
        assert stats.rows == len(rows) and stats.tokens == sum(r.trained_tokens for r in rows)
        return stats

    def whole(optimizer):
        return grpo_update(model, optimizer, rows, config, temperature=1.0, grad_clip=1e12, pad_id=pad)

    streamed_delta = step_delta(model, streamed)
    whole_delta = step_delta(model, whole)
    scale = max(float(g.abs().max()) for g in reference)
    assert max_gap(streamed_delta, reference) <= GRADIENT_TOLERANCE * max(1.0, scale)
    assert max_gap(whole_delta, reference) <= GRADIENT_TOLERANCE * max(1.0, scale)


@pytest.mark.model
def test_streamed_update_without_a_normaliser_would_be_caught():
    """The reference tells a scale error apart: the first group alone, normalised by itself, differs."""
    pol = policy()
    model, pad = pol.model, pol.pad_id
    config = ActorLossConfig(loss_agg_mode="token-mean")
    rows = [r for group in GROUPS for r in group]
    reference = reference_gradients(model, rows, config, pad)

    def first_group_only(optimizer):
        update = StreamedUpdate(model, optimizer, config, temperature=1.0, grad_clip=1e12, pad_id=pad)
        update.add(GROUPS[0])
        return update.finish()

    scale = max(float(g.abs().max()) for g in reference)
    assert max_gap(step_delta(model, first_group_only), reference) > 0.05 * scale


@pytest.mark.model
def test_an_empty_streamed_update_takes_no_step():
    pol = policy()
    optimizer = torch.optim.SGD(trained_params(pol.model), lr=1.0)
    update = StreamedUpdate(pol.model, optimizer, ActorLossConfig(), temperature=1.0, grad_clip=1.0,
                            pad_id=pol.pad_id)
    update.add([])
    stats = update.finish()
    assert (stats.rows, stats.stepped, stats.skipped) == (0, False, False)
