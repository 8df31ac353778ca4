"""One outcome, built once: the typed record, the dicts derived from it, and results.json on the same enum.

``data/results_legacy_termination_strings.json`` was written by the code before the enum reached
results.json (its ``error`` and ``wall_clock`` reasons); it must still be read and compared.
``data/transcript_before_one_grade.json`` is a transcript's outcome from before the one ``Grade`` record (a Harbor-mode
grade, with the copies of derived values the outcome kept then): it must still load, to the same info.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from terminal_agent.errors import GradingError, SandboxError, error_kind
from terminal_agent.evaluation.report import summarize
from terminal_agent.evaluation.results import RunInfo, RunResults, TrialResult
from terminal_agent.outcome import EpisodeOutcome, Grade, RewardParts, Termination
from terminal_agent.outcome import TestVerdict as Verdict  # not a pytest class
from terminal_agent.rollout.episode import unscored_outcome
from terminal_agent.rollout.episode_record import EpisodeRecord
from terminal_agent.rollout.trial_records import trial_from_record

ROOT = Path(__file__).resolve().parents[1]
LEGACY = Path(__file__).parent / "data" / "results_legacy_termination_strings.json"
BEFORE_ONE_GRADE = Path(__file__).parent / "data" / "transcript_before_one_grade.json"


def test_final_info_is_derived_from_the_record_and_a_detail_never_overrides_the_verdict():
    outcome = EpisodeOutcome(
        "t", Termination.FINISHED, scored=True, reward=0.0, test_score=1.0, tampered=True, turns=3,
        grade=Grade(score=1.0, tests=[Verdict("test_a", 1.0, True)]), episode_id="e7",
        reward_parts=RewardParts(test_score=1.0, judge_score=0.2, judge_scored=True, judge_weight=0.3, notes=("n",)),
        details={"reward": 99.0, "grading_s": 0.4, "scored": False, "judge_score": 0.9},
    )
    info = outcome.final_info()
    assert info["reward"] == 0.0 and info["scored"] is True and info["grading_s"] == 0.4
    assert info["termination"] == "finished" and info["steps"] == 3 and info["episode_id"] == "e7"
    assert info["tamper"] is True and info["grade"] == outcome.grade.to_info() and info["grade"]["score"] == 1.0
    assert info["judge_score"] == 0.2 and info["reward_notes"] == ["n"]  # the reward's parts over a stale detail
    assert Grade.from_info(info["grade"]) == outcome.grade  # the dict reads back as the same record
    assert outcome.tests[0].name == "test_a" and outcome.tests[0].passed
    assert "tamper" not in EpisodeOutcome("t", Termination.MAX_STEPS, scored=True, reward=0.5).final_info()


def test_legacy_termination_strings_read_as_the_enum():
    legacy = json.loads(LEGACY.read_text())
    assert {t["termination_reason"] for t in legacy["trials"]} >= {"error", "wall_clock"}  # the fixture is old
    results = RunResults.read(LEGACY)
    terminations = [trial.termination for trial in results.trials]
    assert terminations == [
        Termination.FINISHED, Termination.MAX_STEPS, Termination.SANDBOX_ERROR,
        Termination.FINISHED, Termination.IMAGE_ERROR, Termination.EPISODE_TIMEOUT,
    ]
    assert results.errors_by_kind() == {"image": 1, "sandbox": 1, "timeout": 1}
    with pytest.raises(ValueError, match="termination_reason"):
        TrialResult(task_id="a", attempt=0, status="scored", reward=1.0, termination_reason="done-ish")


def test_an_outcome_is_frozen_and_a_correction_is_a_new_record():
    import dataclasses

    outcome = EpisodeOutcome("t", Termination.FINISHED, scored=True, reward=0.5, grade={"score": 0.5, "tests": [
        {"name": "test_a", "weight": 1.0, "passed": False}]})
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.reward = 1.0
    assert isinstance(outcome.grade, Grade) and outcome.tests == (Verdict("test_a", 1.0, False),)
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.tests[0].passed = True
    corrected = dataclasses.replace(outcome, reward=1.0)  # the info is derived: it follows the correction
    assert (outcome.reward, corrected.reward, corrected.final_info()["reward"]) == (0.5, 1.0, 1.0)
    assert outcome.final_info()["reward"] == 0.5


def test_a_transcript_written_before_the_one_grade_record_still_loads_and_its_stored_info_was_a_pure_copy():
    from terminal_agent.harbor_jobs.records import outcome_from_transcript

    old = json.loads(BEFORE_ONE_GRADE.read_text())
    stored = old["episode"]["outcome"]
    assert "info" in stored and "scored" in stored["grade"]  # the fixture keeps both copies
    trial = TrialResult.model_validate(old["result"])
    outcome = outcome_from_transcript(old, trial)
    assert outcome.final_info() == stored["info"]  # the derived info is what the file stored: nothing was lost
    grade = outcome.grade
    assert grade.verifier["mode"] == "harbor" and grade.verifier["reward_source"] == "ctrf"  # the mode's facts, flat
    assert grade.scored and [t.name for t in grade.tests if t.guard] == ["test_logs_unchanged"]
    assert all(t.message for t in grade.tests if not t.passed)  # the transcript keeps each verdict's message
    assert [t.to_info(with_message=False) for t in trial.tests] == old["result"]["tests"]
    assert trial.model_dump(mode="json", exclude={"transcript"}) == old["result"]  # the trial reads and writes back


def test_results_json_keeps_its_layout_each_test_verdict_without_its_message(tmp_path):
    trial = trial_from_record(EpisodeRecord(EpisodeOutcome(
        "t", Termination.FINISHED, scored=True, reward=0.5, test_score=0.5,
        grade=Grade(score=0.5, tests=[Verdict("test_a", 1.0, True), Verdict("test_b", 1.0, False, message="boom"),
                                      Verdict("test_guard", 0.0, True, guard=True)]),
    )))
    assert trial.tests[1].message == "boom"  # the trial holds the grade's verdicts themselves
    results = RunResults(run=RunInfo(run_id="r", model="scripted"), trials=[trial])
    results.write(tmp_path / "results.json")
    written = (tmp_path / "results.json").read_text()
    assert json.loads(written)["trials"][0]["tests"] == [
        {"name": "test_a", "weight": 1.0, "passed": True, "reported": True, "guard": False},
        {"name": "test_b", "weight": 1.0, "passed": False, "reported": True, "guard": False},
        {"name": "test_guard", "weight": 0.0, "passed": True, "reported": True, "guard": True},
    ]
    assert {tuple(test) for test in json.loads(written)["trials"][0]["tests"]} == {
        ("name", "weight", "passed", "reported", "guard")}  # the keys in the order the files always had
    again = RunResults.read(tmp_path)
    assert again.trials[0].tests[1] == Verdict("test_b", 1.0, False)  # read back: the message stayed out
    again.write(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == written  # byte for byte


def _failed(task_id, attempt, exc):
    """The trial of an attempt ended by ``exc``, as the engine records it."""
    kind = error_kind(exc)
    outcome = unscored_outcome(task_id, Termination.for_error_kind(kind), f"{type(exc).__name__}: {exc}", kind)
    return trial_from_record(EpisodeRecord(outcome, attempt=attempt))


def test_new_trials_write_enum_values_and_eval_compare_reads_an_old_run_beside_a_new_one(tmp_path):
    trials = [
        TrialResult(task_id="hello", attempt=0, status="scored", reward=1.0, termination_reason=Termination.FINISHED,
                    tests=[Verdict(name="test_hello", weight=1.0, passed=True)]),
        TrialResult(task_id="hello", attempt=1, status="scored", reward=1.0, termination_reason=Termination.MAX_STEPS),
        _failed("hello", 2, SandboxError("container died")),
        TrialResult(task_id="stats", attempt=0, status="scored", reward=1.0, termination_reason=Termination.FINISHED),
        _failed("stats", 1, GradingError("grader timed out")),
        trial_from_record(EpisodeRecord(unscored_outcome("stats", Termination.EPISODE_TIMEOUT, "past 60 s", "timeout"),
                                        attempt=2, wall_s=61.0)),
    ]
    new = RunResults(run=RunInfo(run_id="new-run", model="scripted", attempts=3), trials=trials)
    new.summary = summarize(new)
    new_path = tmp_path / "new" / "results.json"
    new.write(new_path)
    written = json.loads(new_path.read_text())
    reasons = [t["termination_reason"] for t in written["trials"]]
    assert reasons == ["finished", "max_steps", "sandbox_error", "finished", "grading_error", "episode_timeout"]
    assert set(written["summary"]["termination_reasons"]) <= {t.value for t in Termination}
    old_path = tmp_path / "old" / "results.json"
    old_path.parent.mkdir()
    shutil.copy(LEGACY, old_path)

    proc = subprocess.run(
        [sys.executable, "-m", "terminal_agent", "eval", "compare", str(old_path), str(new_path), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    comparison = json.loads(proc.stdout)
    # old: hello 1.0 and 0.0 -> 0.5, stats 0.5; new: both 1.0 (error trials left out on both sides)
    assert comparison["difference"] == pytest.approx(0.5)


@pytest.mark.docker
def test_an_unscored_grade_is_an_infrastructure_ending_and_reaches_the_agent_through_its_episode(docker_client):
    import docker

    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.compat.rllm import step_metadata
    from terminal_agent.env import DockerIsolatedEnv
    from terminal_agent.outcome_handoff import HANDOFF_KEY
    from terminal_agent.tasks.model import Task

    task = Task(
        task_id="outcome-hello",
        instruction="Write hello to /app/hello.txt",
        dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
        test_source="def test_hello():\n    assert open('/app/hello.txt').read().strip() == 'hello'\n",
        test_weights={"test_hello": 1.0},
    )
    env = DockerIsolatedEnv(task)
    agent = TerminalBenchAgent()
    try:
        observation, info = env.reset()
        agent.update_from_env(observation, 0.0, False, info)
        assert HANDOFF_KEY not in info
        action = agent.update_from_model("<bash>\ncmd: ls /app\n</bash>")
        _, _, done, step_info = env.step(action.action)
        assert not done
        agent.update_from_env("", 0.0, False, step_info)
        docker.from_env().containers.get(env.sandbox.id).kill()  # the container dies before the engine's grading call
        assert env.compute_final_reward(Termination.MAX_STEPS) == 0.0
    finally:
        env.close()
    outcome = env.outcome
    assert not outcome.scored and outcome.reward is None and not outcome.trainable
    assert outcome.termination.is_infrastructure and outcome.termination is Termination.for_error_kind(outcome.error_kind)
    assert env.final_info == outcome.final_info() and env.final_info["agent_ending"] == "max_steps"
    last = agent.trajectory.steps[-1]  # the engine reads the trajectory after compute_final_reward
    assert step_metadata(last)["termination"] == outcome.termination.value and step_metadata(last)["scored"] is False
    assert last.done
