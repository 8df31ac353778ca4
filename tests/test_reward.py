"""Reward combination policies, strict judge score parsing, the judge registry, judge in the env."""

from __future__ import annotations

import pytest

from terminal_agent.errors import ConfigError, JudgeError, ModelProviderError
from terminal_agent.outcome import Grade
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.judge import (
    JUDGE_BACKENDS,
    JudgeConfig,
    JudgeRequest,
    ModelClientJudge,
    parse_judge_score,
    run_judge,
)
from terminal_agent.rewards.judge_factory import make_judge
from terminal_agent.rewards.reward import RewardConfig, combine_reward

GRADED = Grade(score=0.5)


def test_tests_only_by_default():
    outcome = combine_reward(GRADED)
    assert outcome.reward == 0.5 and outcome.scored and outcome.judge_scored is None


def test_seed_weights_mix_tests_and_judge():
    config = RewardConfig.seed_weights()
    outcome = combine_reward(GRADED, config, judge_score=1.0)
    assert outcome.reward == pytest.approx(0.65 * 0.5 + 0.35 * 1.0)
    assert outcome.judge_scored is True


def test_weights_not_summing_to_one_are_normalised():
    outcome = combine_reward(Grade(score=1.0), RewardConfig(test_weight=2, judge_weight=2), judge_score=0.0)
    assert outcome.reward == pytest.approx(0.5)


def test_judge_failure_policies():
    tests_only = combine_reward(GRADED, RewardConfig.seed_weights(), judge_error="timeout")
    assert tests_only.scored and tests_only.reward == 0.5 and tests_only.judge_scored is False
    assert any("timeout" in note for note in tests_only.notes)
    unscored = combine_reward(
        GRADED, RewardConfig(test_weight=0.65, judge_weight=0.35, judge_failure_policy="unscored"), judge_error="x"
    )
    assert not unscored.scored and unscored.reward is None


def test_unscored_grading_and_tamper():
    failed = combine_reward(Grade(score=None, error="grader timed out"), RewardConfig.seed_weights(), judge_score=1.0)
    assert not failed.scored and failed.reward is None
    tampered = combine_reward(Grade(score=1.0, tamper_signals=["C /usr/bin/python3"]), RewardConfig.seed_weights(), judge_score=1.0)
    assert tampered.scored and tampered.reward == 0.0


def test_reward_config_validation():
    with pytest.raises(ValueError, match="both 0"):
        RewardConfig(test_weight=0, judge_weight=0)
    with pytest.raises(ValueError):
        RewardConfig(judge_failure_policy="zero")
    with pytest.raises(ValueError, match="finite"):
        RewardConfig(judge_weight=float("inf"))  # inf / inf would make the reward NaN


@pytest.mark.parametrize(
    ("text", "value"),
    [("Looks right.\nSCORE: 0.8", 0.8), ("score:1", 1.0), ("SCORE: 0", 0.0), ("fine\n  SCORE : 0.25.  ", 0.25)],
)
def test_judge_score_parsing(text, value):
    assert parse_judge_score(text) == value


@pytest.mark.parametrize(
    "text",
    ["", "I would give it 0.8", "SCORE: high", "SCORE: 1.5", "SCORE: -0.1", "SCORE: nan", "SCORE: 0.5\nSCORE: 0.6",
     "the SCORE: 0.5 is inline"],
)
def test_unparsable_judge_replies_raise(text):
    with pytest.raises(JudgeError):
        parse_judge_score(text)


def test_model_client_judge_and_registry():
    client = ScriptedModelClient(["Solid work.\nSCORE: 0.9", "no score here"])
    judge = make_judge(JudgeConfig(backend="model"), client)
    assert isinstance(judge, ModelClientJudge) and "model" in JUDGE_BACKENDS
    request = JudgeRequest("do x", "turn 1: did x", "1/1 passed")
    verdict, error = run_judge(judge, request)
    assert error is None and verdict.score == 0.9 and verdict.reasoning == "Solid work."
    assert "do x" in client.calls[0][0]["content"] and "1/1 passed" in client.calls[0][0]["content"]
    verdict, error = run_judge(judge, request)
    assert verdict is None and "SCORE" in error
    with pytest.raises(ConfigError, match="unknown judge backend 'nope'; valid: claude-cli, litellm, local, model, none"):
        make_judge(JudgeConfig(backend="nope"), client)


def test_provider_failure_becomes_judge_error():
    def broken(messages):
        raise ModelProviderError("503")

    with pytest.raises(JudgeError, match="503"):
        ModelClientJudge(ScriptedModelClient(broken)).judge(JudgeRequest("x"))
