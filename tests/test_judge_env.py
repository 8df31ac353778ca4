"""The hot switch inside a running env: one env, several episodes, the judge changed between them without a restart."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.env import DockerIsolatedEnv, EnvConfig
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.judge import JudgeConfig
from terminal_agent.rewards.judge_backends.claude_cli_judge import ClaudeCliJudgeOptions
from terminal_agent.rewards.judge_control import CONTROL_ENV
from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.rollout.episode import run_episode
from terminal_agent.tasks.csv.format import read_tasks_csv

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[1]
FINISH = "<finish>\nmessage: done\n</finish>"


def bash(command: str) -> str:
    return "<bash>\n" + yaml.safe_dump({"cmd": command}, default_style="|", width=10_000) + "</bash>"


@pytest.fixture(scope="module")
def task(docker_client):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    chosen = {t.task_id: t for t in read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks}["fix-stats-script"]
    ensure_task_image(chosen)
    return chosen


def _stand_in_claude(tmp_path: Path) -> Path:
    script = tmp_path / "claude"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, sys
            prompt = sys.stdin.read()
            assert "-p" in sys.argv and "json" in sys.argv and prompt
            with open({str(tmp_path / "prompts.txt")!r}, "a") as handle:
                handle.write(prompt[:3000].replace("\\n", " ") + "\\n")
            print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": "Hard-coded?\\nSCORE: 0.2", "total_cost_usd": 0.01}}))
            """
        )
    )
    script.chmod(0o755)
    return script


def test_switching_the_judge_of_a_running_env(task, tmp_path):
    control = tmp_path / "shared" / "judge.json"
    judge = JudgeConfig(control_file=control, claude_cli=ClaudeCliJudgeOptions(executable=str(_stand_in_claude(tmp_path))))
    client = ScriptedModelClient(lambda messages: "Clean fix.\nSCORE: 0.5")
    env = DockerIsolatedEnv(task, EnvConfig(reward=RewardConfig.preset("tests_and_judge"), judge=judge), judge_client=client)
    switch = [sys.executable, str(ROOT / "training_scripts" / "switch_judge_backend.py")]
    environment = {**os.environ, CONTROL_ENV: str(control)}

    def episode() -> dict:
        model = ScriptedModelClient([bash(task.solution), FINISH])
        result = run_episode(env, TerminalBenchAgent(), model, max_steps=5)
        assert result.scored, result.info
        return {**result.info, "reward": result.reward}

    first = episode()  # no control file yet: the client handed over in code
    assert first["reward"] == pytest.approx(0.65 + 0.35 * 0.5) and first["judge_backend"] == "model:scripted"
    assert subprocess.run([*switch, "claude-cli", "--model", "opus", "--weight", "1.0"], env=environment, timeout=60).returncode == 0
    second = episode()
    assert second["judge_backend"] == "claude-cli:opus" and second["judge_cost_usd"] == 0.01
    assert second["reward"] == pytest.approx((0.65 + 1.0 * 0.2) / 1.65) and second["judge_weight"] == 1.0
    assert "stats" in (tmp_path / "prompts.txt").read_text()  # the task's instruction reached the CLI on stdin
    calls = len(client.calls)
    assert subprocess.run([*switch, "none"], env=environment, timeout=60).returncode == 0
    third = episode()
    assert third["reward"] == 1.0 and third["judge_scored"] is None and "judge_backend" not in third
    assert len(client.calls) == calls and len((tmp_path / "prompts.txt").read_text().splitlines()) == 1
