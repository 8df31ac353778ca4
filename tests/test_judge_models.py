"""Judges on real models: litellm against ``transformers serve``, the local model in-process, ``judge eval``.

The embedded SmolLM2-135M is a weak judge: it rarely writes a valid ``SCORE:`` line. These tests
therefore check the plumbing that a real judge relies on - the prompt reaches the model, a reply
comes back, a reply without a valid score is a flagged ``judge_error`` (reward = test score,
never 0), never a provider error or a crash - and the benchmark's records and report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from terminal_agent.evaluation.judge_benchmark_report import judge_report_markdown, summarize_judges
from terminal_agent.outcome import Grade
from terminal_agent.rewards.episode_judging import judge_and_combine
from terminal_agent.rewards.judge import JudgeConfig, JudgeRequest
from terminal_agent.rewards.judge_factory import make_judge
from terminal_agent.rewards.judge_control import JudgeSetting, write_control
from terminal_agent.rewards.reward import RewardConfig

ROOT = Path(__file__).resolve().parents[1]
REQUEST = JudgeRequest(
    "Print the word hello.", "--- turn 1: agent ---\n<bash>\ncmd: echo hello\n</bash>\n--- turn 1: result ---\nhello", "1/1 tests passed"
)


def _assert_judged_or_flagged(outcome, info: dict) -> None:  # noqa: ANN001
    if "judge_error" not in info:
        assert outcome.judge_scored and 0.0 <= outcome.judge_score <= 1.0 and info["judge_attempts"] >= 1
    else:  # the model answered, but not with a valid score line: flagged, not a provider failure
        error = info["judge_error"]
        assert "SCORE" in error or "score" in error, error
        assert "judge model failed" not in error, error


@pytest.mark.model
@pytest.mark.slow
def test_litellm_judge_against_a_real_server(served_model, monkeypatch, tmp_path):
    model, api_base = served_model
    monkeypatch.setenv("LITELLM_MODEL", model)  # configured exactly like eval
    monkeypatch.setenv("LITE_LLM_API_BASE", api_base)
    monkeypatch.setenv("LITE_LLM_API_KEY", "none")
    config = JudgeConfig(backend="litellm", max_tokens=16, max_attempts=1, timeout_s=120)
    judge = make_judge(config)
    assert judge.name == f"litellm:{model}"
    reply = judge.client.complete(judge.build_messages(REQUEST), max_tokens=16, temperature=0.0)
    assert reply.text.strip() and reply.prompt_tokens > 200  # the whole rubric reached the server
    # the same judge chosen through the hot switch, inside the reward
    control = tmp_path / "judge.json"
    write_control(control, JudgeSetting(backend="litellm", weight=0.35))
    outcome, info = judge_and_combine(
        Grade(score=1.0), RewardConfig(), config.model_copy(update={"control_file": control}), lambda: REQUEST
    )
    assert info["judge_backend"] == f"litellm:{model}" and outcome.scored
    _assert_judged_or_flagged(outcome, info)
    if "judge_error" in info:
        assert outcome.reward == 1.0 and outcome.judge_scored is False  # falls back to the tests, never 0
    else:
        assert outcome.reward == pytest.approx((1.0 + 0.35 * outcome.judge_score) / 1.35)  # the switched-in weight


@pytest.mark.model
def test_local_judge_runs_the_embedded_model_in_process():
    judge = make_judge(JudgeConfig(backend="local", max_tokens=16))
    assert judge.name.startswith("local:embedded/") and type(judge.client).__name__ == "EmbeddedModelClient"
    reply = judge.client.complete(judge.build_messages(REQUEST), max_tokens=16)
    assert reply.completion_tokens > 0 and reply.prompt_tokens > 200
    outcome, info = judge_and_combine(
        Grade(score=0.5), RewardConfig.preset("tests_and_judge"), JudgeConfig(backend="local", max_tokens=16, max_attempts=1), lambda: REQUEST
    )
    assert outcome.scored and outcome.reward is not None and info["judge_backend"] == judge.name
    _assert_judged_or_flagged(outcome, info)
    if "judge_error" in info:
        assert outcome.reward == 0.5 and outcome.judge_scored is False
    else:
        assert outcome.reward == pytest.approx(0.65 * 0.5 + 0.35 * outcome.judge_score) and info["judge_cost_usd"] == 0.0


@pytest.mark.model
@pytest.mark.slow
def test_judge_eval_on_the_embedded_model(tmp_path):
    out = tmp_path / "judge-eval"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [
        sys.executable, str(ROOT / "evaluation" / "llm_as_a_judge_evals" / "judge_eval.py"),
        "--judge", "local", "-k", "2", "--case", "hack_shadow_python3",
        "--max-tokens", "16", "-o", str(out),
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert len(results["records"]) == 2 and results["attempts_per_case"] == 2
    assert {r["case"] for r in results["records"]} == {"hack_shadow_python3"} and [c["id"] for c in results["cases"]] == ["hack_shadow_python3"]
    for record in results["records"]:
        assert (record["score"] is None) != (record["error"] is None) and record["latency_s"] > 0
    (row,) = summarize_judges(results)
    assert row["judge"] == "local" and row["attempts"] == 2
    assert row["failure_rate"] == sum(r["score"] is None for r in results["records"]) / 2
    assert (out / "report.md").read_text() == judge_report_markdown(results)  # the report is a function of the JSON
    rebuilt = subprocess.run(
        [sys.executable, str(ROOT / "evaluation" / "llm_as_a_judge_evals" / "report.py"), str(out / "results.json")],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert rebuilt.returncode == 0 and rebuilt.stdout == (out / "report.md").read_text()
