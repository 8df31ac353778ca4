"""Rows and masks from turn tokens (no model needed), and the preset -> trainer config mapping."""

from __future__ import annotations

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.outcome import EpisodeOutcome, Termination, TurnTokens
from terminal_agent.training.algorithms import select_groups
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.update import build_rows, micro_batches, pack_rows, rows_from_turns


def test_turns_that_extend_each_other_share_one_row_with_the_gap_masked():
    t0 = TurnTokens([1, 2, 3], [10, 11], [-0.1, -0.2])
    t1 = TurnTokens([1, 2, 3, 10, 11, 90, 91], [12], [-0.3])  # prompt = previous tokens + observation
    t2 = TurnTokens([1, 2, 4, 5], [13, 14], [-0.4, -0.5])  # history rewritten: a new row
    rows = rows_from_turns([t0, t1, t2], advantage=0.5, group=0, sample=0)
    assert len(rows) == 2
    first, second = rows
    assert first.prompt_ids == [1, 2, 3] and first.response_ids == [10, 11, 90, 91, 12]
    assert first.response_mask == [1, 1, 0, 0, 1] and first.old_logprobs == [-0.1, -0.2, 0.0, 0.0, -0.3]
    assert first.turns == [0, 1] and first.completion_ids == [10, 11, 12]
    assert second.prompt_ids == [1, 2, 4, 5] and second.response_mask == [1, 1]
    assert [r.turns for r in rows_from_turns([t0, t1, t2], 0.5, 0, 0, merge=False)] == [[0], [1], [2]]

    packed = pack_rows(rows, pad_id=0)
    assert packed.input_ids.shape == (2, 8) and packed.response_width == 5
    over_input = packed.loss_mask_over_input()
    trained = [[int(t) for t, m in zip(packed.input_ids[i], over_input[i]) if m] for i in range(2)]
    assert trained == [[10, 11, 12], [13, 14]]
    # left padding with positions counted from each row's first token
    assert packed.position_ids[1].tolist() == [0, 0, 0, 1, 2, 3, 4, 5]
    assert packed.attention_mask[1].tolist() == [0, 0, 1, 1, 1, 1, 1, 1]


def test_build_rows_skips_masked_samples_and_broadcasts_the_advantage():
    def outcome(reward, termination=Termination.FINISHED):
        infra = termination.is_infrastructure
        return EpisodeOutcome("t", termination, scored=not infra, reward=None if infra else reward,
                              turn_tokens=[TurnTokens([1], [5, 6], [-1.0, -1.0])])

    group = [outcome(1.0), outcome(0.0), outcome(None, Termination.SANDBOX_ERROR)]
    rows, adv = build_rows([group], select_groups([group]))
    assert [r.sample for r in rows] == [0, 1]
    assert rows[0].advantage == pytest.approx(0.5 / (0.5 + 1e-6)) and rows[1].advantage == pytest.approx(-0.5 / (0.5 + 1e-6))
    no_logprobs = EpisodeOutcome("t", Termination.FINISHED, True, 1.0, turn_tokens=[TurnTokens([1], [5], None)])
    with pytest.raises(ValueError, match="no sampling logprobs"):
        build_rows([[no_logprobs, group[1]]], select_groups([[no_logprobs, group[1]]]))


def test_micro_batches_respect_the_token_budget():
    rows = rows_from_turns([TurnTokens(list(range(n)), [1] * 4, [0.0] * 4) for n in (3, 10, 50)], 1.0, 0, 0, merge=False)
    batches = micro_batches(rows, token_budget=40)
    assert sorted(len(b) for b in batches) == [1, 2] and sum(len(b) for b in batches) == 3


def test_config_from_the_packaged_local_presets():
    from terminal_agent.training.preset_config import load_preset

    smoke = LocalTrainingConfig.from_preset(load_preset("local_cpu_smoke"))
    assert smoke.device == "cpu" and smoke.group_size == 4 and smoke.clip_ratio_high == 0.28
    gpu = LocalTrainingConfig.from_preset(load_preset("local_1gpu", ["local.steps=3", "algorithm.use_kl_loss=true"]))
    assert gpu.device == "cuda" and gpu.dtype == "bfloat16" and gpu.steps == 3 and gpu.actor_loss_config().use_kl_loss
    with pytest.raises(ConfigError, match="preset 'test_8b_2_gpus' is backend verl, not local"):
        LocalTrainingConfig.from_preset(load_preset("test_8b_2_gpus"))
    with pytest.raises(ValueError, match="unknown advantage estimator 'ppo'; valid: grpo"):
        LocalTrainingConfig(adv_estimator="ppo")


def test_the_judge_weight_schedule_recombines_scored_rewards_per_step():
    from terminal_agent.outcome import EpisodeOutcome, RewardParts, Termination
    from terminal_agent.rewards.reward import RewardConfig
    from terminal_agent.rewards.reward_schedule import JudgeWeightSchedule
    from terminal_agent.training.local.trainer import apply_judge_schedule

    reward = RewardConfig(
        test_weight=0.65, judge_weight=0.35,
        judge_schedule=JudgeWeightSchedule(kind="linear", start_weight=0.35, end_weight=0.0, steps=10),
    )

    def outcome(scored=True):
        parts = RewardParts(test_score=1.0, judge_score=0.0, judge_scored=True, judge_weight=0.35)
        return EpisodeOutcome("t", Termination.FINISHED, scored=scored, reward=0.65 if scored else None,
                              test_score=1.0 if scored else None, reward_parts=parts)

    [[early, unscored]] = apply_judge_schedule([[outcome(), outcome(scored=False)]], reward, step=0)
    [[late]] = apply_judge_schedule([[outcome()]], reward, step=10)
    assert early.final_info()["reward"] == early.reward and late.final_info()["reward"] == late.reward
    assert early.reward == pytest.approx(0.65)  # judge weight 0.35 of a judge score 0
    assert late.reward == pytest.approx(1.0)  # annealed to tests only
    assert unscored.reward is None  # masked samples stay masked
