"""Every registered advantage estimator, loss aggregation mode and KL estimator, computed on small tensors against
values worked out by hand; the registries' names reached from presets and the local config."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from terminal_agent.errors import ConfigError
from terminal_agent.outcome import EpisodeOutcome, Termination, TurnTokens
from terminal_agent.training.algorithms.advantages import ADVANTAGE_ESTIMATORS, compute_advantages
from terminal_agent.training.algorithms.group_selection import select_groups
from terminal_agent.training.algorithms.kl_penalty import KL_ESTIMATORS, kl_penalty
from terminal_agent.training.algorithms.loss_aggregation import LOSS_AGG_MODES, aggregate_loss, loss_normaliser
from terminal_agent.training.algorithms.policy_loss import ActorLossConfig
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.update import build_rows
from terminal_agent.training.preset_config import load_preset

# --- advantage estimators -------------------------------------------------------------------------------------
# rewards [1, 3, 5]: mean 3, deviations -2, 0, 2; population std sqrt(8/3), sample std 2
# rewards [0, 2]: mean 1, population std 1, sample std sqrt(2); a group of one: mean 0, std 1
GROUPS = [np.array([1.0, 3.0, 5.0]), np.array([0.0, 2.0]), np.array([0.7])]
HAND_ADVANTAGES = {
    "grpo": [[-math.sqrt(1.5), 0.0, math.sqrt(1.5)], [-1.0, 1.0], [0.7]],
    "grpo_sample_std": [[-1.0, 0.0, 1.0], [-1 / math.sqrt(2), 1 / math.sqrt(2)], [0.7]],
}
CENTRED = [[-2.0, 0.0, 2.0], [-1.0, 1.0], [0.7]]  # norm_by_std=False, every estimator


def test_every_registered_advantage_estimator_has_hand_values():
    assert sorted(HAND_ADVANTAGES) == ADVANTAGE_ESTIMATORS.names()


@pytest.mark.parametrize("name", sorted(HAND_ADVANTAGES))
def test_advantage_estimator_against_hand_values(name):
    got = compute_advantages(name, GROUPS, norm_by_std=True, epsilon=0.0)
    for advantages, want in zip(got, HAND_ADVANTAGES[name], strict=True):
        np.testing.assert_allclose(advantages, want, rtol=0, atol=1e-12)
    centred = compute_advantages(name, GROUPS, norm_by_std=False, epsilon=0.5)
    for advantages, want in zip(centred, CENTRED, strict=True):
        np.testing.assert_allclose(advantages, want, rtol=0, atol=1e-12)
    # epsilon is added to the std: [0, 2] under grpo is -1 / (1 + 0.5) and a group of one 0.7 / 1.5
    (_, pair, single) = compute_advantages(name, GROUPS, epsilon=0.5)
    std = {"grpo": 1.0, "grpo_sample_std": math.sqrt(2)}[name]
    np.testing.assert_allclose(pair, [-1 / (std + 0.5), 1 / (std + 0.5)], rtol=0, atol=1e-12)
    np.testing.assert_allclose(single, [0.7 / 1.5], rtol=0, atol=1e-12)


def _outcome(reward: float) -> EpisodeOutcome:
    return EpisodeOutcome(task_id="t", termination=Termination.FINISHED, scored=True, reward=reward,
                          turn_tokens=[TurnTokens([1, 2], [3], [-0.1])])


@pytest.mark.parametrize("name", sorted(HAND_ADVANTAGES))
def test_the_local_update_uses_the_estimator_it_is_named(name):
    group = [_outcome(1.0), _outcome(3.0), _outcome(5.0)]
    rows, advantages = build_rows([group], select_groups([group]), estimator=name, epsilon=0.0)
    assert [row.advantage for row in rows] == pytest.approx(HAND_ADVANTAGES[name][0], abs=1e-12)
    np.testing.assert_allclose(advantages[0], HAND_ADVANTAGES[name][0], rtol=0, atol=1e-12)


def test_a_local_preset_reaches_every_registered_estimator_and_a_verl_preset_only_grpo():
    for name in ADVANTAGE_ESTIMATORS.names():
        config = LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke", [f"algorithm.adv_estimator={name}"]))
        assert config.adv_estimator == name
    assert load_preset("prod_32b_8_gpus").algorithm.adv_estimator == "grpo"
    with pytest.raises(ConfigError, match=r"algorithm\.adv_estimator: 'grpo_sample_std' is computed by the local"):
        load_preset("prod_32b_8_gpus", ["algorithm.adv_estimator=grpo_sample_std"])
    with pytest.raises(ConfigError) as caught:
        load_preset("local_cpu_smoke", ["algorithm.adv_estimator=ppo"])
    assert "algorithm.adv_estimator: unknown advantage estimator 'ppo'; valid: grpo, grpo_sample_std" in str(caught.value)


# --- loss aggregation modes -----------------------------------------------------------------------------------
LOSS = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=torch.float64)
MASK = torch.tensor([[1, 1, 0], [0, 1, 1], [0, 0, 0]], dtype=torch.float32)  # a fully masked row
# trained tokens 1, 2 | 5, 6: 4 tokens summing to 14; row sums 3, 11 (2 rows trained); row means 3 / 2 and 11 / 2,
# each count with verl's floor of 1e-8 (ROW_COUNT)
ROW_COUNT = 2 + 1e-8
HAND_AGGREGATES = {  # mode: (own normalisers, padded length 3 | tokens 8, rows 4, loss_scale_factor 7)
    "token-mean": (14 / 4, 14 / 8),
    "token-sum": (14.0, 14.0),
    "seq-mean-token-sum": (14 / 2, 14 / 4),
    "seq-mean-token-mean": ((3 + 11) / ROW_COUNT / 2, (3 + 11) / ROW_COUNT / 4),
    "seq-mean-token-sum-norm": (14 / 2 / 3, 14 / 4 / 7),
}
HAND_NORMALISERS = {  # tokens 8, rows 4, loss_scale_factor 7
    "token-mean": 8.0, "token-sum": 1.0, "seq-mean-token-sum": 4.0, "seq-mean-token-mean": 4.0,
    "seq-mean-token-sum-norm": 28.0,
}


def test_every_registered_loss_agg_mode_has_hand_values():
    assert sorted(HAND_AGGREGATES) == LOSS_AGG_MODES.names() == sorted(HAND_NORMALISERS)


@pytest.mark.parametrize("mode", sorted(HAND_AGGREGATES))
def test_loss_agg_mode_against_hand_values(mode):
    own, batch = HAND_AGGREGATES[mode]
    assert float(aggregate_loss(LOSS, MASK, mode)) == pytest.approx(own, abs=1e-12)
    norms = {"batch_num_tokens": 8.0, "global_batch_size": 4.0, "loss_scale_factor": 7.0}
    assert float(aggregate_loss(LOSS, MASK, mode, **norms)) == pytest.approx(batch, abs=1e-12)
    assert loss_normaliser(mode, tokens=8, rows=4, loss_scale_factor=7) == HAND_NORMALISERS[mode]
    # the streamed update's identity: the unit-normalised loss over the normaliser is the batch's loss
    unit = aggregate_loss(LOSS, MASK, mode, batch_num_tokens=1.0, global_batch_size=1.0, loss_scale_factor=1.0)
    assert float(unit) / HAND_NORMALISERS[mode] == pytest.approx(batch, abs=1e-12)


def test_an_unknown_loss_agg_mode_lists_the_registered_ones():
    with pytest.raises(ConfigError, match="unknown loss_agg_mode 'mean'; valid: seq-mean-token-mean, "):
        aggregate_loss(LOSS, MASK, "mean")
    with pytest.raises(ConfigError, match="token-sum"):
        ActorLossConfig(loss_agg_mode="mean")
    with pytest.raises(ValueError, match="unknown loss_agg_mode 'mean'"):  # pydantic's error, the key named
        LocalTrainingConfig(loss_agg_mode="mean")


# --- KL estimators --------------------------------------------------------------------------------------------
# k3 of d = ref - logp: exp(d) - d - 1; d = ln 2 -> 1 - ln 2; d = -ln 2 -> ln 2 - 1/2; d = 5 -> e^5 - 6 clamped
# to 10; d = -30 clamped to -20 -> e^-20 + 19 clamped to 10
LOGP = torch.tensor([[-1.0, -1.0, -2.0, -1.0, -0.5]], dtype=torch.float64)
REF = LOGP + torch.tensor([[0.0, math.log(2), -math.log(2), 5.0, -30.0]], dtype=torch.float64)
HAND_KL = {name: [0.0, 1 - math.log(2), math.log(2) - 0.5, 10.0, 10.0] for name in ("k3", "low_var_kl")}


def test_every_registered_kl_estimator_has_hand_values():
    assert sorted(HAND_KL) == KL_ESTIMATORS.names()


@pytest.mark.parametrize("name", sorted(HAND_KL))
def test_kl_estimator_against_hand_values(name):
    torch.testing.assert_close(kl_penalty(name, LOGP, REF)[0], torch.tensor(HAND_KL[name], dtype=torch.float64),
                               rtol=0, atol=1e-12)


def test_an_unknown_kl_estimator_lists_the_registered_ones():
    with pytest.raises(ConfigError, match="unknown kl_loss_type 'kl'; valid: k3, low_var_kl"):
        ActorLossConfig(use_kl_loss=True, kl_loss_type="kl")
    ActorLossConfig(use_kl_loss=False, kl_loss_type="kl")  # not used, not checked (verl's rule)
    with pytest.raises(ValueError, match="unknown kl_loss_type 'kl'"):
        LocalTrainingConfig(kl_loss_type="kl")
