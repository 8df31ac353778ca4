"""Judge prompt and parsing, retries with backoff, reward presets and the judge-weight schedule."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from terminal_agent.errors import ConfigError, JudgeError, JudgeUnavailableError
from terminal_agent.outcome import Grade
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.episode_judging import judge_and_combine
from terminal_agent.rewards.judge import JudgeConfig, JudgeRequest, JudgeVerdict, ModelClientJudge, run_judge
from terminal_agent.rewards.judge_factory import make_judge
from terminal_agent.rewards.judge_prompt import cut_middle, parse_judge_score, render_judge_prompt
from terminal_agent.rewards.reward import REWARD_PRESETS, RewardConfig, combine_reward, reward_at_step
from terminal_agent.rewards.reward_schedule import JudgeWeightSchedule, judge_weight_at

REQUEST = JudgeRequest("sum the numbers", "--- turn 1: agent ---\n<bash>...</bash>", "2/2 tests passed")


@pytest.mark.parametrize(
    ("text", "value"),
    [("Good.\n**SCORE: 0.9**", 0.9), ("Good.\n`SCORE: 0.4`", 0.4), ("SCORE:1.0", 1.0), ("x\n  score : 0.25.", 0.25)],
)
def test_score_line_tolerates_markdown_but_nothing_else(text, value):
    assert parse_judge_score(text) == value


@pytest.mark.parametrize(
    "text",
    ["SCORE: 0.5 because", "SCORE: 1e9", "SCORE: inf", "SCORE: 0.3\n**SCORE: 0.4**", "Score 0.5", "SCORE: ½", "   "],
)
def test_score_line_rejects(text):
    with pytest.raises(JudgeError):
        parse_judge_score(text)


def test_prompt_carries_task_transcript_tests_and_cuts_the_middle():
    transcript = "HEAD" + "x" * 50_000 + "TAIL"
    prompt = render_judge_prompt("the task", transcript, "1/2 tests passed", max_transcript_chars=1000)
    assert "the task" in prompt and "1/2 tests passed" in prompt and "HEAD" in prompt and "TAIL" in prompt
    assert "characters cut" in prompt and len(prompt) < 5000 and "SCORE: <a number from 0 to 1>" in prompt
    assert cut_middle("short", 10) == "short"
    assert render_judge_prompt("", "", "").count("(") >= 3  # empty parts are named, not left blank


def test_retries_with_backoff_then_success():
    client = ScriptedModelClient(["no score", "SCORE: 2", "fine\nSCORE: 0.7"])
    delays: list[float] = []
    verdict, error = run_judge(
        ModelClientJudge(client, JudgeConfig()), REQUEST, max_attempts=3, backoff_initial_s=1.0, sleep=delays.append
    )
    assert error is None and verdict.score == 0.7 and verdict.attempts == 3 and len(client.calls) == 3
    assert len(delays) == 2 and 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0  # doubling, with jitter


def test_retries_exhausted_give_an_error_naming_the_attempts():
    delays: list[float] = []
    verdict, error = run_judge(
        ModelClientJudge(ScriptedModelClient(["a", "b"]), JudgeConfig()), REQUEST, max_attempts=2, sleep=delays.append
    )
    assert verdict is None and "after 2 attempts" in error and "SCORE" in error and len(delays) == 1


def test_unavailable_judge_is_not_retried():
    class Missing:
        name = "missing"
        calls = 0

        def judge(self, request: JudgeRequest) -> JudgeVerdict:
            Missing.calls += 1
            raise JudgeUnavailableError("the CLI is not installed")

    verdict, error = run_judge(Missing(), REQUEST, max_attempts=5, sleep=lambda s: pytest.fail("slept"))
    assert verdict is None and "not installed" in error and Missing.calls == 1


def test_a_crashing_judge_becomes_an_error_not_an_exception():
    class Buggy:
        name = "buggy"

        def judge(self, request: JudgeRequest) -> JudgeVerdict:
            raise KeyError("oops")

    verdict, error = run_judge(Buggy(), REQUEST)
    assert verdict is None and "KeyError" in error


def test_reward_presets_and_weights():
    assert RewardConfig().judge_enabled is False  # off by default
    mixed = RewardConfig.preset("tests_and_judge")
    assert (mixed.test_weight, mixed.judge_weight) == (0.65, 0.35) == (REWARD_PRESETS["tests_and_judge"]["test_weight"], 0.35)
    assert RewardConfig.seed_weights() == mixed
    assert RewardConfig.preset("tests_and_judge", judge_failure_policy="unscored").judge_failure_policy == "unscored"
    with pytest.raises(ConfigError, match="unknown reward preset 'nope'; valid: tests_and_judge, tests_only"):
        RewardConfig.preset("nope")
    outcome = combine_reward(Grade(score=0.5), mixed, judge_score=1.0, judge_weight=1.0)  # hot-switched weight
    assert outcome.reward == pytest.approx((0.65 * 0.5 + 1.0) / 1.65) and outcome.judge_weight == 1.0


def test_judge_failure_falls_back_to_tests_never_zero():
    outcome = combine_reward(Grade(score=0.8), RewardConfig.preset("tests_and_judge"), judge_error="timeout")
    assert outcome.reward == 0.8 and outcome.scored and outcome.judge_scored is False


@pytest.mark.parametrize(
    ("kind", "step", "expected"),
    [("linear", 0, 0.4), ("linear", 10, 0.4), ("linear", 60, 0.2), ("linear", 110, 0.0), ("linear", 10_000, 0.0),
     ("cosine", 60, 0.2), ("cosine", 35, 0.4 * 0.5 * (1 + 0.7071067811865476)), ("step", 109, 0.4), ("step", 110, 0.0),
     ("constant", 10_000, 0.4), ("linear", -5, 0.4)],
)
def test_schedule_values(kind, step, expected):
    schedule = JudgeWeightSchedule(kind=kind, start_weight=0.4, **({} if kind == "constant" else {"end_weight": 0.0}), start_step=10, steps=100)
    assert judge_weight_at(schedule, step) == pytest.approx(expected)


def test_schedule_validation_names_the_key():
    for bad, key in (({"steps": 0}, "steps"), ({"start_weight": -1}, "start_weight"), ({"kind": "exp"}, "kind"), ({"bogus": 1}, "bogus")):
        with pytest.raises(ValidationError, match=key):
            JudgeWeightSchedule(**bad)
    with pytest.raises(ValidationError, match="constant schedule"):
        JudgeWeightSchedule(kind="constant", start_weight=0.3, end_weight=0.1)


def test_reward_at_step_recombines_recorded_scores():
    config = RewardConfig(test_weight=0.65, judge_weight=0.0, judge_schedule=JudgeWeightSchedule(start_weight=0.35, steps=100))
    assert config.judge_enabled  # the schedule has weight, so the env asks the judge
    info = {"scored": True, "test_score": 1.0, "judge_score": 0.0, "reward": 1.0}
    assert reward_at_step(info, config, 0) == pytest.approx(0.65 / 1.0)
    assert reward_at_step(info, config, 50) == pytest.approx(0.65 / (0.65 + 0.175))
    assert reward_at_step(info, config, 100) == 1.0
    assert reward_at_step({**info, "scored": False}, config, 0) is None
    assert reward_at_step({**info, "tamper": True}, config, 0) == 0.0
    assert reward_at_step({**info, "judge_score": None}, config, 0) == 1.0  # judge failed: tests alone
    assert reward_at_step(info, RewardConfig(), 7) == 1.0  # no schedule: the recorded reward


def test_judge_and_combine_with_a_client_given_in_code():
    client = ScriptedModelClient(["ok\nSCORE: 0.5"])
    outcome, info = judge_and_combine(Grade(score=1.0), RewardConfig.preset("tests_and_judge"), JudgeConfig(), lambda: REQUEST, judge_client=client)
    assert outcome.reward == pytest.approx(0.65 + 0.35 * 0.5) and info["judge_backend"] == "model:scripted"
    assert info["judge_attempts"] == 1 and "judge_error" not in info


def test_judge_and_combine_skips_the_judge_when_off_untested_or_tampered():
    client = ScriptedModelClient(["SCORE: 1"])
    cases = [
        (Grade(score=0.5), RewardConfig(), 0.5),  # weight 0: off
        (Grade(score=None, error="grader crashed"), RewardConfig.preset("tests_and_judge"), None),
        (Grade(score=1.0, tamper_signals=["C /usr/local/bin/python3"]), RewardConfig.preset("tests_and_judge"), 0.0),
    ]
    for grade, reward, expected in cases:
        outcome, info = judge_and_combine(grade, reward, JudgeConfig(), lambda: REQUEST, judge_client=client)
        assert outcome.reward == expected and "judge_backend" not in info
    assert client.calls == []
    outcome, _ = judge_and_combine(Grade(score=0.5), RewardConfig.preset("tests_and_judge"), JudgeConfig(backend="none"), lambda: REQUEST)
    assert outcome.reward == 0.5 and outcome.judge_scored is None


def test_judge_and_combine_flags_an_unbuildable_backend(monkeypatch):
    monkeypatch.delenv("LITELLM_MODEL", raising=False)
    outcome, info = judge_and_combine(Grade(score=0.25), RewardConfig.preset("tests_and_judge"), JudgeConfig(backend="litellm"), lambda: REQUEST)
    assert outcome.reward == 0.25 and outcome.scored and "LITELLM_MODEL" in info["judge_error"]
    with pytest.raises(JudgeUnavailableError, match="LITELLM_MODEL"):
        make_judge(JudgeConfig(backend="litellm"))
