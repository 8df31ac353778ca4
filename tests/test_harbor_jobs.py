"""Eval runs as Harbor jobs, checked against stock Harbor 0.25 itself.

One real `terminal-agent eval run` (the scripted model, real Docker sandboxes, the real grader) on a shipped task
plus a task whose image cannot be built. Every file it writes is validated with Harbor's own models (JobConfig,
JobResult, TrialConfig, TrialResult, the ATIF Trajectory) inside the stock Harbor venv that
scripts/setup_harbor_venv.sh builds (a session fixture; skipped only where no Python 3.12 exists), and
`terminal-agent view` starts `harbor view` on the run, whose HTTP API lists the job, its trials and trajectories.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from terminal_agent.task_quality.validation import oracle_replies
from terminal_agent.tasks.csv.format import write_tasks_csv
from terminal_agent.tasks.loading import load_tasks

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "dataset" / "latest_verified.csv"
TASK = "fix-stats-script"
HOSTILE_COMMAND = "printf '<script>alert(1)</script>\\n\\033[31mred\\033[0m\\n'; ls /nope"
NO_PYTHON_312 = 3


@pytest.fixture(scope="session")
def harbor_python() -> Path:
    """Stock Harbor's venv, built once through the committed script."""
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup_harbor_venv.sh")], capture_output=True, text=True, timeout=900)
    if run.returncode == NO_PYTHON_312:
        pytest.skip("no Python 3.12 on this machine: stock Harbor cannot be installed")
    assert run.returncode == 0, run.stderr[-2000:]
    return Path(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory) -> Path:
    """A real eval run: the oracle after a hostile command and a reply without an action; and an unbuildable task."""
    base = tmp_path_factory.mktemp("harbor-eval")
    task = next(t for t in load_tasks(SHIPPED) if t.task_id == TASK)
    broken = task.model_copy(update={"task_id": "unbuildable", "dockerfile": "FROM terminal-agent/no-such-image:never\n"})
    write_tasks_csv([task, broken], base / "tasks.csv")
    replies = [f"I will look first.\n<bash>\ncmd: {json.dumps(HOSTILE_COMMAND)}\n</bash>", "no action here", *oracle_replies(task)]
    (base / "replies.json").write_text(json.dumps(replies))
    run_dir = base / "runs" / "scripted-run"
    proc = subprocess.run(
        [sys.executable, "-m", "terminal_agent", "eval", "run", str(base / "tasks.csv"), "--model", f"scripted:{base / 'replies.json'}",
         "--max-steps", "8", "-c", "2", "-o", str(run_dir), "--no-plot"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]  # the unbuildable task has no scored trial: exit 1, files written
    return run_dir


VALIDATE = r"""
import json, sys
from pathlib import Path
from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.result import TrialResult
from harbor.models.trajectories import Trajectory

job = Path(sys.argv[1])
out = {"job_config": JobConfig.model_validate_json((job / "config.json").read_text()).model_dump(mode="json"),
       "job_result": JobResult.model_validate_json((job / "result.json").read_text()).model_dump(mode="json"),
       "trials": {}}
for trial_dir in sorted(p for p in job.iterdir() if (p / "result.json").is_file()):
    result = TrialResult.model_validate_json((trial_dir / "result.json").read_text())
    TrialConfig.model_validate_json((trial_dir / "config.json").read_text())
    trajectory = Trajectory.model_validate_json((trial_dir / "agent" / "trajectory.json").read_text())
    out["trials"][trial_dir.name] = {
        "result": result.model_dump(mode="json"), "reward_valid": result.reward_valid,
        "failure_cause": result.failure_cause, "trajectory": trajectory.to_json_dict(),
    }
print(json.dumps(out))
"""


def _validated(harbor_python: Path, job_dir: Path) -> dict:
    run = subprocess.run([str(harbor_python), "-W", "ignore", "-c", VALIDATE, str(job_dir)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]  # a file Harbor's models refuse fails here, naming the field
    return json.loads(run.stdout)


@pytest.mark.docker
def test_every_file_of_a_real_eval_run_is_valid_to_harbor(eval_run, harbor_python):
    checked = _validated(harbor_python, eval_run)
    trials = checked["trials"]
    assert sorted(trials) == [f"{TASK}__attempt-0", "unbuildable__attempt-0"]
    stats = checked["job_result"]["stats"]
    assert stats["n_completed_trials"] == 2 and stats["n_errored_trials"] == 1
    assert checked["job_config"]["agents"][0]["name"] == "terminal-agent"

    good = trials[f"{TASK}__attempt-0"]
    assert good["result"]["verifier_result"]["rewards"]["reward"] == 1.0 and good["reward_valid"] is True
    steps = good["trajectory"]["steps"]
    assert [s["source"] for s in steps[:2]] == ["system", "user"] and steps[-1]["source"] == "system"
    agent_steps = [s for s in steps if s["source"] == "agent"]
    assert len(agent_steps) == good["result"]["agent_result"]["metadata"]["turns"] == 4  # one step per model call
    hostile = agent_steps[0]
    assert hostile["tool_calls"][0]["function_name"] == "bash"
    assert hostile["tool_calls"][0]["arguments"]["cmd"] == HOSTILE_COMMAND
    output = hostile["observation"]["results"][0]
    assert output["source_call_id"] == hostile["tool_calls"][0]["tool_call_id"]
    assert "<script>alert(1)</script>" in output["content"] and "\x1b[31mred" in output["content"]
    assert output["extra"]["exit_code"] == 2 and output["extra"]["duration_s"] >= 0
    assert hostile["metrics"]["prompt_tokens"] > 0 and hostile["metrics"]["completion_tokens"] > 0
    assert hostile["extra"]["messages_sent"]["mode"] == "full"
    no_action = agent_steps[1]  # the parse error is an observation, not a tool call
    assert "tool_calls" not in no_action
    assert no_action["observation"]["results"][0]["extra"]["format_error"] is True
    assert no_action["observation"]["results"][0]["content"].startswith("<format_error>")
    delta = no_action["extra"]["messages_sent"]
    assert delta["mode"] == "delta" and [m["role"] for m in delta["messages"]] == ["user"]  # the reply is the previous step
    assert "<script>alert(1)</script>" in delta["messages"][-1]["content"]
    assert agent_steps[-1]["tool_calls"][0]["function_name"] == "finish"
    assert agent_steps[-1]["observation"]["results"][0]["content"].startswith("<finish_output>")

    broken = trials["unbuildable__attempt-0"]
    assert broken["result"]["verifier_result"] is None  # never a reward of 0
    assert broken["reward_valid"] is False and broken["failure_cause"] == "sandbox_failed"
    assert broken["result"]["exception_info"]["exception_type"] == "SandboxBuildFailedError"
    assert broken["result"]["agent_result"]["metadata"]["infrastructure_failure"] is True
    assert broken["trajectory"]["extra"]["scored"] is False


@pytest.mark.docker
def test_verifier_folder_holds_reward_weighted_tests_and_output(eval_run):
    task = next(t for t in load_tasks(SHIPPED) if t.task_id == TASK)
    verifier = eval_run / f"{TASK}__attempt-0" / "verifier"
    assert verifier.joinpath("reward.txt").read_text().strip() == "1"
    ctrf = json.loads(verifier.joinpath("ctrf.json").read_text())["results"]
    weights = {t["name"]: t["extra"]["weight"] for t in ctrf["tests"] if not t["extra"]["guard"]}
    assert weights == {name: float(w) for name, w in task.test_weights.items()} and len(weights) >= 2
    assert ctrf["summary"]["passed"] == ctrf["summary"]["tests"] >= len(task.test_weights)
    assert "PASSED" in verifier.joinpath("test-stdout.txt").read_text()
    assert not (eval_run / "unbuildable__attempt-0" / "verifier" / "reward.txt").exists()


@pytest.mark.docker
def test_converting_the_run_afterwards_writes_the_same_trials(eval_run, tmp_path):
    copy = tmp_path / "old-run"
    shutil.copytree(eval_run, copy, ignore=shutil.ignore_patterns("*__attempt-*", "config.json", "result.json"))
    proc = subprocess.run([sys.executable, "-m", "terminal_agent", "eval", "harbor-export", str(copy)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for trial in (f"{TASK}__attempt-0", "unbuildable__attempt-0"):
        live = json.loads((eval_run / trial / "agent" / "trajectory.json").read_text())
        converted = json.loads((copy / trial / "agent" / "trajectory.json").read_text())
        assert converted["extra"].pop("converted") is True
        assert converted == live
        live_result = json.loads((eval_run / trial / "result.json").read_text())
        converted_result = json.loads((copy / trial / "result.json").read_text())
        for key in ("verifier_result", "exception_info", "id", "task_name"):
            if key == "exception_info" and live_result[key]:
                live_result[key].pop("occurred_at"), converted_result[key].pop("occurred_at")
            assert converted_result[key] == live_result[key], key


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.docker
def test_terminal_agent_view_serves_the_job_its_trials_and_trajectories(eval_run, harbor_python, tmp_path):
    log = (tmp_path / "view.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "terminal_agent", "view", str(eval_run), "--no-setup"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
    try:
        url = proc.stdout.readline().strip()  # printed once the viewer answers
        assert url.startswith("http://127.0.0.1:") and url.endswith("/jobs/scripted-run"), (tmp_path / "view.log").read_text()
        base = url.rsplit("/jobs/", 1)[0]
        jobs = _get(base + "/api/jobs")["items"]
        assert [j["name"] for j in jobs] == ["scripted-run"] and jobs[0]["n_errored_trials"] == 1
        trials = {t["name"]: t for t in _get(base + "/api/jobs/scripted-run/trials")["items"]}
        assert trials[f"{TASK}__attempt-0"]["reward"] == 1.0
        assert trials["unbuildable__attempt-0"]["reward"] is None  # shown as an error, never as 0
        assert trials["unbuildable__attempt-0"]["error_type"] == "SandboxBuildFailedError"
        for name in trials:
            trajectory = _get(f"{base}/api/jobs/scripted-run/trials/{name}/trajectory")
            assert trajectory["schema_version"] == "ATIF-v1.8" and trajectory["steps"]
        verifier = _get(f"{base}/api/jobs/scripted-run/trials/{TASK}__attempt-0/verifier-output")
        assert "PASSED" in verifier["stdout"] and verifier["reward"]["reward"] == 1.0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    time.sleep(0.1)
