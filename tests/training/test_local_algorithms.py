"""Our advantage/loss functions against the real references: verl 0.9.1's core_algos (run in a
subprocess from its own wheel) and rLLM HEAD's rl_algo (loaded from its wheel), on random tensors
over several seeds and shapes, equal within 1e-6."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from terminal_agent.errors import ConfigError
from terminal_agent.outcome import EpisodeOutcome, Termination, TurnTokens
from terminal_agent.training.algorithms import (
    ADVANTAGE_ESTIMATORS,
    LOSS_AGG_MODES,
    ActorLossConfig,
    actor_loss,
    aggregate_loss,
    clipped_policy_loss,
    compute_advantages,
    low_var_kl,
    select_groups,
)

TOL = 1e-6
SEEDS = [0, 1, 2, 3]
SHAPES = [(1, 1), (3, 7), (8, 33), (16, 5)]


def _random_groups(rng: np.random.Generator) -> list[np.ndarray]:
    sizes = [1, 2, 3, 5, 8, 4]  # a group of one included
    groups = []
    for k, n in enumerate(sizes):
        if k % 3 == 0:
            groups.append(rng.integers(0, 2, size=n).astype(np.float64))  # pass/fail
        elif k % 3 == 1:
            groups.append(np.full(n, float(rng.random())))  # zero variance: eps matters
        else:
            groups.append(rng.random(n))
    return groups


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_by_std", [True, False])
def test_grpo_matches_rllm_unified_trainer(rllm_rl_algo, seed, norm_by_std):
    rng = np.random.default_rng(seed)
    groups = _random_groups(rng)
    ours = compute_advantages("grpo", groups, norm_by_std=norm_by_std, epsilon=1e-6)
    for rewards, adv in zip(groups, ours):
        ref, _ = rllm_rl_algo.calculate_grpo_advantages_per_group(rewards, norm_adv_by_std_in_grpo=norm_by_std)
        np.testing.assert_allclose(adv, ref, rtol=0, atol=TOL)


def test_grpo_group_of_one_and_eps():
    (single,) = compute_advantages("grpo", [np.array([0.7])])
    assert single[0] == pytest.approx(0.7 / (1 + 1e-6), abs=1e-12)
    # zero variance: centred rewards are 0 whatever eps is; eps keeps it finite
    (flat,) = compute_advantages("grpo", [np.array([1.0, 1.0, 1.0])], epsilon=1e-6)
    assert np.all(flat == 0.0)
    # population std: [0, 1] has mean 0.5 and std 0.5, so advantages are +-0.5/(0.5+eps)
    (pair,) = compute_advantages("grpo", [np.array([0.0, 1.0])], epsilon=1e-6)
    np.testing.assert_allclose(pair, [-0.5 / (0.5 + 1e-6), 0.5 / (0.5 + 1e-6)], atol=1e-12)
    # sample std of [0, 1] is sqrt(0.5): the two paths differ, which is why we state which one we match
    (pair_sample,) = compute_advantages("grpo_sample_std", [np.array([0.0, 1.0])], epsilon=1e-6)
    assert pair_sample[1] == pytest.approx(0.5 / (0.5**0.5 + 1e-6), abs=1e-12)
    assert abs(pair_sample[1] - pair[1]) > 0.2


def test_unknown_estimator_lists_valid_names():
    with pytest.raises(ConfigError, match="grpo"):
        compute_advantages("nope", [np.array([1.0])])
    assert {"grpo", "grpo_sample_std"} <= set(ADVANTAGE_ESTIMATORS.names())


def test_grpo_sample_std_matches_verl_core_algos(verl_reference):
    cases, ours = [], []
    for seed in SEEDS:
        rng = np.random.default_rng(100 + seed)
        groups = _random_groups(rng)
        rng.shuffle(groups)
        rewards = np.concatenate(groups)
        index = [f"task{g}" for g, grp in enumerate(groups) for _ in grp]
        length = int(rng.integers(1, 9))
        mask = torch.from_numpy((rng.random((len(rewards), length)) > 0.3).astype(np.float64))
        # verl reads the outcome reward as the sum of the token-level rewards: put it on one token
        token_level = torch.zeros(len(rewards), length, dtype=torch.float64)
        token_level[:, -1] = torch.from_numpy(rewards)
        for norm in (True, False):
            cases.append(
                {"kind": "grpo", "token_level_rewards": token_level, "response_mask": mask, "index": index,
                 "epsilon": 1e-6, "norm_by_std": norm}
            )
            adv = compute_advantages("grpo_sample_std", groups, norm_by_std=norm)
            ours.append(torch.from_numpy(np.concatenate(adv)).unsqueeze(-1) * mask)
    for got, ref in zip(ours, verl_reference.run(cases)):
        torch.testing.assert_close(got, ref, rtol=0, atol=TOL)


def _loss_inputs(seed: int, shape: tuple[int, int]):
    g = torch.Generator().manual_seed(seed)
    old = -torch.rand(shape, generator=g, dtype=torch.float64) * 3
    # ratios well outside [0.8, 1.28] and past clip_ratio_c, so every branch is exercised
    new = old + torch.randn(shape, generator=g, dtype=torch.float64) * 0.8
    adv = torch.randn(shape[0], 1, generator=g, dtype=torch.float64).expand(shape).contiguous()
    mask = (torch.rand(shape, generator=g) > 0.25).to(torch.float64)
    mask[0, 0] = 1.0
    if shape[0] > 2:
        mask[1] = 0.0  # a fully masked sequence (infrastructure-masked sample)
    return old, new, adv, mask


@pytest.mark.parametrize("global_norms", [False, True])
def test_policy_loss_and_aggregation_match_verl(verl_reference, global_norms):
    cases, ours = [], []
    for seed in SEEDS:
        for shape in SHAPES:
            old, new, adv, mask = _loss_inputs(seed, shape)
            for mode in ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]:
                norms = {}
                if global_norms:  # a micro-batch of a larger batch: the global counts divide
                    norms = {"batch_num_tokens": float(mask.sum()) * 3, "global_batch_size": shape[0] * 2,
                             "loss_scale_factor": 11}
                clip = dict(clip_ratio_low=0.2, clip_ratio_high=0.28, clip_ratio_c=3.0)
                cases.append({"kind": "policy_loss", "old": old, "new": new, "adv": adv, "mask": mask,
                              "mode": mode, "global": norms, **clip})
                loss, stats = clipped_policy_loss(old, new, adv, mask, loss_agg_mode=mode, **clip, **norms)
                ours.append({"loss": loss, "actor/pg_clipfrac": stats.pg_clipfrac,
                             "actor/ppo_kl": stats.ppo_kl, "actor/pg_clipfrac_lower": stats.pg_clipfrac_lower})
                loss_mat = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
                cases.append({"kind": "agg", "loss_mat": loss_mat, "mask": mask, "mode": mode, "global": norms})
                ours.append(aggregate_loss(loss_mat, mask, mode, **norms))
    results = verl_reference.run(cases)
    assert len(results) == len(ours)
    clip_active = 0.0
    for got, ref in zip(ours, results):
        if isinstance(got, dict):
            torch.testing.assert_close(got["loss"], ref["loss"], rtol=0, atol=TOL)
            for key in ("actor/pg_clipfrac", "actor/ppo_kl", "actor/pg_clipfrac_lower"):
                assert got[key] == pytest.approx(ref[key], abs=TOL), key
            clip_active += got["actor/pg_clipfrac_lower"]
        else:
            torch.testing.assert_close(got, ref, rtol=0, atol=TOL)
    assert clip_active > 0  # the dual clip really was exercised


def test_low_var_kl_matches_verl(verl_reference):
    cases, ours = [], []
    for seed in SEEDS:
        g = torch.Generator().manual_seed(seed)
        lp = -torch.rand(5, 9, generator=g, dtype=torch.float64) * 4
        ref = lp + torch.randn(5, 9, generator=g, dtype=torch.float64) * 6  # large gaps hit the clamps
        cases.append({"kind": "kl", "logprob": lp, "ref_logprob": ref, "kl_penalty": "low_var_kl"})
        ours.append(low_var_kl(lp, ref))
    for got, want in zip(ours, verl_reference.run(cases)):
        torch.testing.assert_close(got, want, rtol=0, atol=TOL)


def test_micro_batches_sum_to_the_full_batch_loss():
    old, new, adv, mask = _loss_inputs(7, (8, 13))
    for mode in ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean"]:
        full, _ = clipped_policy_loss(old, new, adv, mask, loss_agg_mode=mode)
        norms = {"batch_num_tokens": mask.sum(), "global_batch_size": (mask.sum(-1) > 0).sum()}
        parts = sum(
            clipped_policy_loss(old[i : i + 3], new[i : i + 3], adv[i : i + 3], mask[i : i + 3],
                                loss_agg_mode=mode, **norms)[0]
            for i in range(0, 8, 3)
        )
        torch.testing.assert_close(parts, full, rtol=0, atol=1e-12)


def test_actor_loss_adds_kl_and_entropy_terms():
    old, new, adv, mask = _loss_inputs(3, (4, 6))
    ref = old - 0.3
    entropy = torch.rand(4, 6, dtype=torch.float64)
    base, _ = actor_loss(old, new, adv, mask, ActorLossConfig())
    cfg = ActorLossConfig(use_kl_loss=True, kl_loss_coef=0.5, entropy_coeff=0.1)
    total, metrics = actor_loss(old, new, adv, mask, cfg, entropy=entropy, ref_logprobs=ref)
    expected = base - 0.1 * aggregate_loss(entropy, mask, "token-mean") + 0.5 * aggregate_loss(
        low_var_kl(new, ref), mask, "token-mean"
    )
    torch.testing.assert_close(total, expected, rtol=0, atol=1e-12)
    assert metrics["actor/kl_loss"] > 0
    with pytest.raises(ValueError, match="reference logprobs"):
        actor_loss(old, new, adv, mask, cfg)
    with pytest.raises(ValueError, match="seq-mean-token-mean"):
        ActorLossConfig(loss_agg_mode="mean")
    assert set(LOSS_AGG_MODES) >= {"token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"}


def _outcome(reward, termination=Termination.FINISHED, turns=None):
    infra = Termination.parse(termination).is_infrastructure
    return EpisodeOutcome(
        task_id="t", termination=termination, scored=not infra, reward=None if infra else reward,
        turn_tokens=turns or [TurnTokens([1, 2], [3], [-0.1])],
    )


def test_group_selection_drops_zero_variance_and_masks_infrastructure():
    groups = [
        [_outcome(1.0), _outcome(1.0), _outcome(1.0)],  # zero variance: dropped
        [_outcome(1.0), _outcome(0.0), _outcome(None, Termination.SANDBOX_ERROR)],  # infra sample masked
        [_outcome(0.0), _outcome(None, Termination.GRADING_ERROR), _outcome(1.0, Termination.MAX_TOKENS)],
        [_outcome(None, Termination.IMAGE_ERROR)] * 2,  # every attempt infra: empty
        [_outcome(0.0), _outcome(0.0, Termination.OUTPUT_LIMIT, [TurnTokens([1], [2, 3], None, "length")])],
    ]
    sel = select_groups(groups, reject_zero_variance=True)
    assert sel.kept == [[], [0, 1], [0, 2], [], []]
    assert sel.groups_dropped_zero_variance == 2
    assert sel.groups_dropped_empty == 1
    assert sel.masked_infrastructure == 4
    assert sel.truncated == 2 and sel.length_cut_turns == 1
    # without rejection a zero-variance group trains (with zero advantage); masking still applies
    keep_all = select_groups(groups, reject_zero_variance=False)
    assert keep_all.kept == [[0, 1, 2], [0, 1], [0, 2], [], [0, 1]]
    # the stated truncation policy can be switched to masking
    strict = select_groups(groups, reject_zero_variance=False, mask_truncated=True)
    assert strict.kept[2] == [0] and strict.masked_truncated == 2
