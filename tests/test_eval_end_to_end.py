"""The evaluation end to end on the shipped tasks: real containers, real grader, real models.

Kept small for 2 cores: one attempt per task, at most 2 steps, short replies.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from terminal_agent.evaluation.results import RunResults
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.outcome import Termination
from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner
from terminal_agent.task_quality.validation import oracle_replies
from terminal_agent.tasks.loading import load_tasks

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "dataset" / "latest_verified.csv"


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["python", "-m", "terminal_agent", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.mark.docker
def test_scripted_oracle_scores_one_and_infrastructure_errors_are_not_failures(tmp_path):
    task = load_tasks(SHIPPED)[0]
    broken = task.model_copy(update={"task_id": "unbuildable", "dockerfile": "FROM terminal-agent/no-such-image:never\n"})
    replies = {task.task_id: oracle_replies(task), broken.task_id: ["<finish>\nmessage: x\n</finish>"]}
    runner = RolloutRunner(
        ScriptedModelClient([], name="oracle"),
        RolloutConfig(max_steps=2, concurrency=2, output_dir=tmp_path),
        model_for_trial=lambda spec: ScriptedModelClient(replies[spec.task.task_id], name="oracle"),
    )
    results = runner.run([task, broken])
    by_id = {t.task_id: t for t in results.trials}
    good, bad = by_id[task.task_id], by_id["unbuildable"]
    assert good.status == "scored" and good.reward == 1.0 and good.passed
    assert all(t.passed for t in good.tests) and good.turns == 2 and good.env_time_s > 0
    assert bad.status == "error" and bad.reward is None and bad.error.kind == "image"
    summary = results.summary
    assert summary["n_errors"] == 1 and summary["errors_by_kind"] == {"image": 1}
    assert summary["pass_rate"]["value"] == 1.0  # the error is excluded, not counted as a failure
    on_disk = RunResults.read(tmp_path / "results.json")
    assert on_disk.trials == results.trials
    transcript = json.loads((tmp_path / good.transcript).read_text())
    assert transcript["model_calls"][0]["response"]["text"].startswith("<bash>")
    assert "<bash_output>" in transcript["model_calls"][1]["messages"][-1]["content"]


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_run_eval_sh_with_the_embedded_model_on_the_shipped_tasks(tmp_path):
    from terminal_agent.tasks.csv.format import write_tasks_csv

    output = tmp_path / "run"
    tasks = load_tasks(SHIPPED)[:2]  # the corpus has 100+ tasks; two keep the embedded model's CPU run short (CI time)
    write_tasks_csv(tasks, tmp_path / "two.csv")
    # two turns of 24 tokens: the caps reaching the run and being kept are what is checked, not their size
    env = {**os.environ, "MAX_STEPS": "2", "MAX_TOKENS": "24", "OUTPUT_DIR": str(output), "TASKS": str(tmp_path / "two.csv")}
    env.pop("LITELLM_MODEL", None)
    proc = subprocess.run([str(ROOT / "evaluation" / "run_eval.sh")], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = RunResults.read(output / "results.json")
    assert results.run.model == "embedded/SmolLM2-135M-Instruct" and results.run.max_steps == 2
    assert sorted(t.task_id for t in results.trials) == sorted(t.task_id for t in tasks)
    for trial in results.trials:
        assert trial.status == "scored", trial.error  # the infrastructure worked for every episode
        assert 1 <= trial.turns <= 2 and trial.completion_tokens <= 24 * trial.turns
        assert trial.model_time_s > 0 and trial.env_time_s > 0 and 0.0 <= trial.reward <= 1.0
        assert (output / trial.transcript).is_file()
    assert (output / "report.md").read_text().startswith("# Evaluation: embedded/")
    assert (output / "rewards.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "pass rate" in proc.stderr

    report = _cli("eval", "report", str(output), "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["n_trials"] == len(tasks)
    compare = _cli("eval", "compare", str(output / "results.json"), str(output / "results.json"), "--json")
    assert compare.returncode == 0, compare.stderr
    assert json.loads(compare.stdout)["difference"] == 0.0


@pytest.mark.docker
@pytest.mark.model
@pytest.mark.slow
def test_eval_through_litellm_against_a_local_openai_compatible_server(served_model, tmp_path):
    model, api_base = served_model
    output = tmp_path / "litellm"
    env = {**os.environ, "LITELLM_MODEL": model, "LITE_LLM_API_BASE": api_base, "LITE_LLM_API_KEY": "none"}
    proc = subprocess.run(
        [str(ROOT / "evaluation" / "run_eval.sh"), "--max-steps", "2", "--max-tokens", "32", "-o", str(output), "--",
         "--task", load_tasks(SHIPPED)[0].task_id, "--no-plot"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = RunResults.read(output)
    assert results.run.model == model and len(results.trials) == 1
    trial = results.trials[0]
    assert trial.status == "scored", trial.error
    assert 1 <= trial.turns <= 2 and trial.prompt_tokens > 100 and 0 < trial.completion_tokens <= 64


@pytest.mark.docker
def test_wall_clock_and_provider_failures_are_errors_of_their_kind(tmp_path):
    import socket
    import time

    from terminal_agent.models.litellm_client import LiteLLMConfig, LiteLLMModelClient

    task = load_tasks(SHIPPED)[0]

    def slow(messages):
        time.sleep(8)
        return "<finish>\nmessage: late\n</finish>"

    slow_runner = RolloutRunner(
        ScriptedModelClient(slow, name="slow"), RolloutConfig(max_steps=2, episode_timeout_s=1.5, output_dir=tmp_path / "slow")
    )
    started = time.monotonic()
    timed_out = slow_runner.run([task]).trials[0]
    # the runner did not wait for the stuck model call (8 s); the margins are for a loaded CI machine
    assert time.monotonic() - started < 7
    assert 1.5 <= timed_out.wall_s < 5
    assert timed_out.status == "error" and timed_out.error.kind == "timeout" and timed_out.reward is None
    assert timed_out.termination is Termination.EPISODE_TIMEOUT

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead_endpoint = LiteLLMModelClient(
        LiteLLMConfig(model="openai/x", api_base=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
    )
    results = RolloutRunner(dead_endpoint, RolloutConfig(max_steps=2, output_dir=tmp_path / "dead")).run([task])
    trial = results.trials[0]
    assert trial.status == "error" and trial.error.kind == "provider" and trial.reward is None
    assert results.summary["n_scored"] == 0 and results.summary["errors_by_kind"] == {"provider": 1}


@pytest.mark.docker
def test_eval_run_replays_a_script_per_trial_and_fails_when_a_task_has_no_scored_trial(tmp_path):
    from terminal_agent.tasks.csv.format import write_tasks_csv

    good = load_tasks(SHIPPED)[:2]
    broken = good[0].model_copy(update={"task_id": "unbuildable", "dockerfile": "FROM terminal-agent/no-such-image:never\n"})
    script = tmp_path / "finish.json"
    script.write_text(json.dumps(["<finish>\nmessage: nothing to do\n</finish>"]))

    write_tasks_csv(good, tmp_path / "good.csv")
    ok = _cli("eval", "run", str(tmp_path / "good.csv"), "--model", f"scripted:{script}", "--max-steps", "2",
              "--no-plot", "-o", str(tmp_path / "ok"), "--max-error-rate", "0")
    assert ok.returncode == 0, ok.stderr[-3000:]
    trials = RunResults.read(tmp_path / "ok" / "results.json").trials
    # one reply, two trials: each trial starts the script from its first reply
    assert len(trials) == 2 and all(t.status == "scored" and t.turns == 1 for t in trials), [t.error for t in trials]

    write_tasks_csv([*good, broken], tmp_path / "with_broken.csv")
    failed = _cli("eval", "run", str(tmp_path / "with_broken.csv"), "--model", f"scripted:{script}", "--max-steps", "2",
                  "--no-plot", "-o", str(tmp_path / "failed"))
    assert failed.returncode == 1, failed.stderr[-3000:]
    assert "task unbuildable has no scored trial" in failed.stderr
    assert (tmp_path / "failed" / "results.json").is_file()  # the results are written either way


def test_max_error_rate_counts_infrastructure_errors_over_all_trials():
    from terminal_agent.cli.eval_commands import run_failures
    from terminal_agent.evaluation.results import TrialError, TrialResult

    def trial(task_id: str, attempt: int, scored: bool) -> TrialResult:
        if scored:
            return TrialResult(task_id=task_id, attempt=attempt, status="scored", reward=0.5)
        return TrialResult(task_id=task_id, attempt=attempt, status="error", error=TrialError(kind="sandbox", message="x"))

    trials = [trial("a", 0, True), trial("a", 1, False), trial("b", 0, True), trial("b", 1, True)]
    assert run_failures(trials, None) == []
    assert run_failures(trials, 0.25) == []  # 1 of 4 is not more than 25 %
    (problem,) = run_failures(trials, 0.2)
    assert "1/4 trials" in problem and "--max-error-rate 0.2" in problem
    (problem,) = run_failures([*trials, trial("c", 0, False)], None)
    assert problem == "task c has no scored trial (infrastructure errors only)"


def test_eval_run_refuses_an_unknown_sandbox_backend_and_a_stray_images_dir(tmp_path):
    from typer.testing import CliRunner

    from terminal_agent.cli import app

    shipped = Path(__file__).resolve().parents[1] / "dataset" / "latest_verified.csv"
    bad = CliRunner().invoke(app, ["eval", "run", str(shipped), "-t", "count-log-levels", "--sandbox", "podman"],
                             env={"COLUMNS": "400"})
    # the registered backends are listed (a test may have registered its own `local` one in this process)
    valid = " ".join(bad.output.split()).split("valid: ", 1)[-1]
    assert bad.exit_code == 2 and "podman" in bad.output
    assert all(name in valid for name in ("bwrap", "docker", "ray")), bad.output
    stray = CliRunner().invoke(app, ["eval", "run", str(shipped), "-t", "count-log-levels", "--images-dir", str(tmp_path)])
    assert stray.exit_code == 2 and "--sandbox bwrap" in stray.output
    assert not any(tmp_path.iterdir()), "nothing may be written when the arguments are refused"
