"""training_scripts/device_run/check_rollout_jobs.py on a real verl run's rollouts (tests/data/verl_rollouts_h200:
the H200 node's step 4, three GRPO groups, and verl's own metrics of that step), read by stock Harbor 0.25's
models. The check holds on what the node wrote; a trial whose advantage is not its group's, a group split over
two trajectory uids, or a step whose extremes are not verl's fails it, naming the group, episode or side."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from harbor_reference import harbor_python

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "verl_rollouts_h200"
spec = importlib.util.spec_from_file_location("check_rollout_jobs", REPO / "training_scripts/device_run/check_rollout_jobs.py")
check_rollout_jobs = importlib.util.module_from_spec(spec)
sys.modules["check_rollout_jobs"] = check_rollout_jobs
spec.loader.exec_module(check_rollout_jobs)

STEP = "step-000004"


@pytest.fixture()
def rollouts(tmp_path) -> Path:
    harbor_python()  # skips where no Python 3.12 exists for stock Harbor
    copy = tmp_path / "rollouts"
    shutil.copytree(DATA / "rollouts", copy)
    return copy


def _edit_metadata(trial: Path, **changes) -> None:
    result = json.loads((trial / "result.json").read_text())
    result["agent_result"]["metadata"].update(changes)
    (trial / "result.json").write_text(json.dumps(result))


def test_the_nodes_rollouts_are_grpo_groups_and_say_what_verl_trained_on(rollouts):
    report = check_rollout_jobs.check(rollouts, DATA / "verl_metrics.jsonl")
    assert report["ok"], report
    assert report["trials"] == 24
    (step,) = report["steps"]
    assert step["step"] == 4 and step["groups"] == 3 and step["groups_with_variance"] == 2
    assert step["policy_versions"] == [3]
    assert step["negative_advantages"] == 12  # the two groups with one pass each: 7 + 5 below the mean
    assert step["trials_adv_min"] == pytest.approx(step["verl_adv_min"], abs=1e-4) and step["verl_adv_min"] < 0
    assert step["trials_adv_max"] == pytest.approx(step["verl_adv_max"], abs=1e-4)


def test_an_advantage_that_is_not_the_groups_fails_naming_the_episode(rollouts):
    _edit_metadata(rollouts / STEP / f"{STEP}__group-00__episode-3", advantage=0.5)
    report = check_rollout_jobs.check(rollouts, DATA / "verl_metrics.jsonl")
    assert not report["ok"]
    problems = report["steps"][0]["problems"]
    assert any("episode 3: advantage 0.500000, the group gives 0.000000" in p for p in problems), problems


def test_a_group_over_two_trajectory_uids_fails(rollouts):
    # rLLM's default: every trajectory its own uid, so verl's grpo sees groups of one
    _edit_metadata(rollouts / STEP / f"{STEP}__group-01__episode-2", trajectory_uid="another-uid")
    problems = check_rollout_jobs.check(rollouts, DATA / "verl_metrics.jsonl")["steps"][0]["problems"]
    assert any("trajectory uids differ" in p for p in problems), problems


def test_extremes_that_are_not_verls_fail(rollouts, tmp_path):
    lines = []
    for line in (DATA / "verl_metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["step"] == 4:
            record["data"]["critic/advantages/min"] = 0.0  # what every step logged before the uid fix
        lines.append(json.dumps(record))
    metrics = tmp_path / "verl_metrics.jsonl"
    metrics.write_text("\n".join(lines) + "\n")
    problems = check_rollout_jobs.check(rollouts, metrics)["steps"][0]["problems"]
    assert any(p.startswith("advantage min: trials -0.72") and "verl 0.000000" in p for p in problems), problems


def test_a_file_harbor_refuses_stops_the_check(rollouts):
    (rollouts / STEP / f"{STEP}__group-06__episode-0" / "agent" / "trajectory.json").write_text('{"steps": 3}')
    with pytest.raises(SystemExit, match="stock Harbor refused a file"):
        check_rollout_jobs.check(rollouts, DATA / "verl_metrics.jsonl")
