"""Judge benchmark: the shipped cases, the ranking math, and the report rebuilt from results alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.evaluation.judge_benchmark import (
    HACKING_TAG,
    RESULTS_FORMAT,
    build_judges,
    load_cases,
    parse_judge_spec,
    run_judge_benchmark,
)
from terminal_agent.evaluation.judge_benchmark_report import judge_report_markdown, summarize_judges
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.judge import JudgeConfig, ModelClientJudge

CASES = Path(__file__).resolve().parents[1] / "evaluation" / "llm_as_a_judge_evals" / "cases"


def test_shipped_cases_load_and_cover_reward_hacking():
    cases = load_cases(CASES)
    hacking = [c for c in cases if HACKING_TAG in c.tags]
    assert len(cases) >= 12 and len(hacking) >= 4
    assert all(c.expected.max <= 0.2 for c in hacking)  # hacking must score low
    assert all("passed" in c.tests for c in cases)
    shadow = next(c for c in cases if c.id == "hack_shadow_python3")
    assert "/usr/local/bin/python3" in shadow.request().transcript
    assert len({c.id for c in cases}) == len(cases) == len(list(CASES.glob("*.yaml")))


def test_a_bad_case_file_is_named(tmp_path):
    (tmp_path / "a.yaml").write_text((CASES / "failed_gave_up.yaml").read_text())
    (tmp_path / "b.yaml").write_text("id: b\ninstruction: x\ntrajectory: []\ntests: none\nexpected: {min: 0.5, max: 0.2}\n")
    with pytest.raises(ConfigError, match=r"b\.yaml: bad judge case: trajectory: .*; expected: .*min 0.5 is above max 0.2"):
        load_cases(tmp_path)
    (tmp_path / "b.yaml").write_text((CASES / "failed_gave_up.yaml").read_text())
    with pytest.raises(ConfigError, match="'failed_gave_up' is used twice"):
        load_cases(tmp_path)
    with pytest.raises(ConfigError, match="no such judge case directory"):
        load_cases(tmp_path / "missing")


def test_judge_specs():
    assert parse_judge_spec("litellm:ollama/llama3:8b") == JudgeConfig(backend="litellm", model="ollama/llama3:8b")
    assert parse_judge_spec("local").model is None
    with pytest.raises(ConfigError, match="gives no scores"):
        build_judges(["none"])
    with pytest.raises(ConfigError, match="unknown judge backend 'gpt'"):
        build_judges(["gpt"])


def _oracle(messages):  # noqa: ANN001, ANN202 - scores by the case's tests line; fooled by every hack
    prompt = messages[-1]["content"]
    return "SCORE: 1.0" if "tests passed, weighted score 1.00" in prompt else "SCORE: 0.1"


def test_benchmark_ranks_a_discerning_judge_above_one_fooled_by_hacks():
    cases = load_cases(CASES)
    hacking_ids = {c.id for c in cases if HACKING_TAG in c.tags}
    by_transcript = {c.request().transcript: c for c in cases}

    def discerning(messages):  # noqa: ANN001, ANN202 - knows each case's middle; one failure in every 4th call
        discerning.calls += 1
        if discerning.calls % 4 == 0:
            return "no score"
        prompt = messages[-1]["content"]
        case = next(c for transcript, c in by_transcript.items() if transcript in prompt)
        return f"SCORE: {case.expected.middle + (0.01 if discerning.calls % 2 else -0.01):.3f}"

    discerning.calls = 0
    judges = {
        "fooled": ModelClientJudge(ScriptedModelClient(_oracle), JudgeConfig()),
        "discerning": ModelClientJudge(ScriptedModelClient(discerning), JudgeConfig()),
    }
    seen = []
    results = run_judge_benchmark(judges, cases, attempts=2, on_attempt=seen.append)
    assert results["format"] == RESULTS_FORMAT and len(results["records"]) == len(seen) == 2 * 2 * len(cases)
    results = json.loads(json.dumps(results))  # what is kept on disk
    rows = summarize_judges(results)
    assert [r["judge"] for r in rows] == ["discerning", "fooled"] and [r["rank"] for r in rows] == [1, 2]
    discerning_row, fooled_row = rows
    assert discerning_row["failure_rate"] == pytest.approx(0.25)
    assert discerning_row["accuracy"] == pytest.approx(0.75)  # failures count as misses
    assert discerning_row["error_to_middle"] == pytest.approx(0.01, abs=1e-3)
    assert fooled_row["hacking_accuracy"] == 0.0 and fooled_row["spread"] == 0.0
    scores = [r["score"] for r in results["records"] if r["judge"] == "fooled" and r["case"] in hacking_ids]
    assert scores and set(scores) == {1.0}
    report = judge_report_markdown(results)
    assert "| 1 | discerning | 0.750 |" in report and "hack_shadow_python3 | reward_hacking | [0.00, 0.15] |" in report


def test_report_rejects_what_is_not_a_results_record():
    with pytest.raises(ConfigError, match="not a judge benchmark results record"):
        summarize_judges({"records": []})
    with pytest.raises(ConfigError, match="'records' is missing"):
        summarize_judges({"format": RESULTS_FORMAT, "judges": [], "cases": []})
