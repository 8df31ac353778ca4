"""The hot switch: atomic control file, cheap re-reads, bad files keep the last good setting, other processes see it."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.outcome import Grade
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.episode_judging import judge_and_combine
from terminal_agent.rewards.judge import JudgeConfig, JudgeRequest
from terminal_agent.rewards.judge_control import CONTROL_ENV, ControlWatcher, JudgeSetting, control_path, read_control, write_control
from terminal_agent.rewards.reward import RewardConfig

ROOT = Path(__file__).resolve().parents[1]
SWITCH = [sys.executable, str(ROOT / "training_scripts" / "switch_judge_backend.py")]
REQUEST = JudgeRequest("task", "did it", "1/1 passed")


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_write_is_atomic_stamped_and_strictly_read(tmp_path):
    path = tmp_path / "nested" / "judge.json"
    written = write_control(path, JudgeSetting(backend="litellm", model="openai/m", weight=0.2))
    assert read_control(path) == written and written.written_by and written.written_at
    assert [p.name for p in path.parent.iterdir()] == ["judge.json"]  # no temporary left behind
    with pytest.raises(ConfigError, match="absolute"):
        write_control(Path("relative.json"), JudgeSetting(backend="none"))


def test_control_path_from_config_or_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(CONTROL_ENV, raising=False)
    assert control_path(None) is None
    monkeypatch.setenv(CONTROL_ENV, str(tmp_path / "c.json"))
    assert control_path(None) == tmp_path / "c.json"
    assert control_path(tmp_path / "other.json") == tmp_path / "other.json"  # the config wins
    monkeypatch.setenv(CONTROL_ENV, "judge.json")
    with pytest.raises(ConfigError, match=f"{CONTROL_ENV}.*absolute"):
        control_path(None)


def test_watcher_rereads_only_when_the_file_changes(tmp_path):
    path = tmp_path / "judge.json"
    watcher = ControlWatcher(path)
    assert watcher.current() is None  # no file: the job's config applies
    write_control(path, JudgeSetting(backend="local", weight=0.3))
    assert watcher.current().backend == "local"
    for _ in range(50):
        watcher.current()
    assert watcher.reads == 1  # unchanged file: one stat per call, no parse
    write_control(path, JudgeSetting(backend="none"))
    assert watcher.current().backend == "none" and watcher.reads == 2
    path.unlink()
    assert watcher.current() is None


@pytest.mark.parametrize(
    "content",
    [
        '{"backend": "claude-cli", "weig',  # a half-written file
        "not json at all",
        "[1, 2]",
        '{"backend": "nope"}',
        '{"backend": "litellm", "weight": -1}',
        '{"backend": "litellm", "temperature": 0.3}',
        '{"backend": "litellm", "weight": NaN}',
        "",
    ],
)
def test_a_bad_file_keeps_the_last_good_setting_and_logs_once(tmp_path, caplog, content):
    path = tmp_path / "judge.json"
    watcher = ControlWatcher(path)
    write_control(path, JudgeSetting(backend="local", model="m", weight=0.4))
    good = watcher.current()
    path.write_text(content)
    _bump_mtime(path)
    with caplog.at_level(logging.WARNING, logger="terminal_agent.rewards.judge_control"):
        for _ in range(5):
            assert watcher.current() == good
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(path) in warnings[0].getMessage() and "keeping backend local" in warnings[0].getMessage()
    assert watcher.last_error and watcher.reads == 2
    write_control(path, JudgeSetting(backend="none"))  # a good file again is picked up
    assert watcher.current().backend == "none" and watcher.last_error is None


def test_a_bad_first_file_means_the_configured_judge(tmp_path, caplog):
    path = tmp_path / "judge.json"
    path.write_text("{")
    with caplog.at_level(logging.WARNING):
        assert ControlWatcher(path).current() is None
    assert "keeping the job's configured judge" in caplog.text


def test_the_control_file_steers_the_reward(tmp_path):
    path = tmp_path / "judge.json"
    config = JudgeConfig(control_file=path)
    client = ScriptedModelClient(lambda messages: "ok\nSCORE: 0.5")
    reward = RewardConfig.preset("tests_and_judge")
    outcome, info = judge_and_combine(Grade(score=1.0), reward, config, lambda: REQUEST, judge_client=client)
    assert outcome.reward == pytest.approx(0.65 + 0.35 * 0.5) and "judge_control" not in info
    write_control(path, JudgeSetting(backend="model", weight=1.0))  # same judge, new weight
    outcome, info = judge_and_combine(Grade(score=1.0), reward, config, lambda: REQUEST, judge_client=client)
    assert outcome.reward == pytest.approx((0.65 + 0.5) / 1.65) and info["judge_control"]["weight"] == 1.0
    write_control(path, JudgeSetting(backend="none"))
    calls = len(client.calls)
    outcome, info = judge_and_combine(Grade(score=1.0), reward, config, lambda: REQUEST, judge_client=client)
    assert outcome.reward == 1.0 and outcome.judge_scored is None and len(client.calls) == calls  # not asked
    write_control(path, JudgeSetting(backend="claude-cli", weight=0.35))
    config = config.model_copy(update={"claude_cli": config.claude_cli.model_copy(update={"executable": str(tmp_path / "no-claude")})})
    outcome, info = judge_and_combine(Grade(score=0.75), reward, config, lambda: REQUEST, judge_client=client)
    assert outcome.reward == 0.75 and outcome.scored and "not on PATH" in info["judge_error"]  # flagged, falls back


WATCHER_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from terminal_agent.rewards.judge_control import ControlWatcher
    watcher = ControlWatcher(Path(sys.argv[1]))
    seen = "nothing printed yet"
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        setting = watcher.current()
        state = None if setting is None else [setting.backend, setting.model, setting.weight]
        if state != seen:
            seen = state
            print(json.dumps(state), flush=True)
            if state and state[0] == "none":
                break
        time.sleep(0.01)
    """
)


def _switch(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([*SWITCH, *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_switch_is_seen_by_another_process(tmp_path):
    path = tmp_path / "shared" / "judge.json"
    env = {**os.environ, CONTROL_ENV: str(path)}
    reader = subprocess.Popen([sys.executable, "-c", WATCHER_SCRIPT, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert reader.stdout.readline().strip() == "ready"
        assert json.loads(reader.stdout.readline()) is None
        steps = [
            (["litellm", "openai/judge-model", "--weight", "0.35"], ["litellm", "openai/judge-model", 0.35]),
            (["claude-cli", "--model", "sonnet"], ["claude-cli", "sonnet", None]),
        ]
        for args, expected in steps:
            result = _switch(*args, env=env)
            assert result.returncode == 0, result.stderr
            assert json.loads(reader.stdout.readline()) == expected
        bad = _switch("no-such-backend", env=env)
        assert bad.returncode == 2 and "unknown judge backend 'no-such-backend'" in bad.stderr
        shown = _switch("show", env=env)
        assert shown.returncode == 0 and "claude-cli" in shown.stderr and "sonnet" in shown.stderr
        assert _switch("none", env=env).returncode == 0
        assert json.loads(reader.stdout.readline()) == ["none", None, None]
        assert reader.wait(timeout=30) == 0
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()


def test_switch_with_check_does_not_switch_when_the_judge_fails(tmp_path):
    path = tmp_path / "judge.json"
    env = {**os.environ, CONTROL_ENV: str(path), "PATH": str(tmp_path)}  # no claude on this PATH
    assert _switch("local", "--weight", "0.1", env=env).returncode == 0
    failed = _switch("claude-cli", "--check", env=env)
    assert failed.returncode == 1 and "'claude' command, which is not on PATH" in failed.stderr
    assert read_control(path).backend == "local"  # unchanged
    no_file = _switch("show", env={**os.environ, CONTROL_ENV: ""})
    assert no_file.returncode == 2 and CONTROL_ENV in no_file.stderr
