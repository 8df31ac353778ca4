"""The claude-cli judge against stand-in executables with the Claude Code CLI's input/output shape.

The real CLI, in print mode (``claude -p --output-format json [--model M]``), reads the prompt
from stdin when no prompt argument is given and prints one JSON object: ``type: result``,
``subtype`` (``success`` or an error kind), ``is_error``, ``result`` (the reply text),
``total_cost_usd``, ``duration_ms``, ``session_id``, ``usage``. The stand-ins below keep that
shape, refuse a call without ``-p --output-format json`` or without stdin, and record what they got.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from terminal_agent.errors import JudgeError, JudgeUnavailableError
from terminal_agent.rewards.judge import JudgeConfig, JudgeRequest, run_judge
from terminal_agent.rewards.judge_backends.claude_cli_judge import ClaudeCliJudgeOptions
from terminal_agent.rewards.judge_factory import make_judge

CLI_PRELUDE = textwrap.dedent(
    """\
    #!{python}
    import json, os, sys, time
    args = sys.argv[1:]
    if not ("-p" in args or "--print" in args) or "--output-format" not in args or args[args.index("--output-format") + 1] != "json":
        print("stand-in: expected -p --output-format json", file=sys.stderr)
        sys.exit(2)
    prompt = sys.stdin.read()
    if not prompt:
        print("Error: Input must be provided either through stdin or as a prompt argument when using --print", file=sys.stderr)
        sys.exit(1)
    model = args[args.index("--model") + 1] if "--model" in args else "default"
    record = {{"argv": sys.argv, "stdin_chars": len(prompt), "model": model, "pgid": os.getpgid(0), "pid": os.getpid()}}
    with open({record!r}, "w") as handle:
        json.dump(record, handle)

    def answer(text, subtype="success", is_error=False, cost=0.0123):
        print(json.dumps({{"type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": 1234,
                          "num_turns": 1, "result": text, "session_id": "s-1", "total_cost_usd": cost,
                          "usage": {{"input_tokens": len(prompt) // 4, "output_tokens": 20}}}}))
    """
)

REQUEST = JudgeRequest("Sum the numbers in /app/input.txt", "--- turn 1: agent ---\n<bash>\ncmd: awk '{s+=$1} END {print s}' /app/input.txt\n</bash>", "1/1 tests passed")


def make_cli(tmp_path: Path, body: str, name: str = "claude") -> tuple[Path, Path]:
    record = tmp_path / f"{name}.record.json"
    script = tmp_path / name
    script.write_text(CLI_PRELUDE.format(python=sys.executable, record=str(record)) + textwrap.dedent(body))
    script.chmod(0o755)
    return script, record


def judge_for(script: Path, **config) -> object:
    return make_judge(JudgeConfig(backend="claude-cli", claude_cli=ClaudeCliJudgeOptions(executable=str(script)), **config))


def test_prompt_goes_through_stdin_and_the_reply_is_parsed(tmp_path):
    script, record = make_cli(tmp_path, 'answer("Clean, general solution.\\nSCORE: 0.85")\n')
    big = REQUEST.transcript + "\n" + "x" * 300_000  # > 128 KiB: would not fit in one argv string
    judge = judge_for(script, model="sonnet", max_transcript_chars=400_000)
    verdict = judge.judge(JudgeRequest(REQUEST.instruction, big, REQUEST.test_summary))
    assert verdict.score == 0.85 and verdict.reasoning == "Clean, general solution."
    assert verdict.cost_usd == pytest.approx(0.0123) and verdict.backend == "claude-cli:sonnet" and verdict.details["duration_ms"] == 1234
    got = json.loads(record.read_text())
    assert got["stdin_chars"] > 300_000 and got["model"] == "sonnet"
    assert got["argv"][1:] == ["-p", "--output-format", "json", "--model", "sonnet"]
    assert sum(len(a) for a in got["argv"]) < 1000 and not any("Sum the numbers" in a for a in got["argv"])


def test_extra_args_and_default_model(tmp_path):
    script, record = make_cli(tmp_path, 'answer("SCORE: 0.1")\n')
    verdict = make_judge(
        JudgeConfig(backend="claude-cli", claude_cli=ClaudeCliJudgeOptions(executable=str(script), extra_args=["--max-turns", "1"]))
    ).judge(REQUEST)
    assert verdict.score == 0.1 and verdict.backend == "claude-cli:default"
    assert json.loads(record.read_text())["argv"][1:] == ["-p", "--output-format", "json", "--max-turns", "1"]


def _alive_in_group(pgid: int) -> list[int]:
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in ("Z", "X"):
            alive.append(int(entry.name))
    return alive


def test_a_hanging_cli_is_killed_with_its_whole_process_group(tmp_path):
    script, record = make_cli(
        tmp_path,
        """
        import subprocess
        child = subprocess.Popen(["sleep", "600"])  # a helper in the same group, as the real CLI starts
        with open(__import__("sys").argv[0] + ".child", "w") as handle:
            handle.write(str(child.pid))
        time.sleep(600)
        """,
    )
    judge = judge_for(script, timeout_s=2.0)
    started = time.monotonic()
    with pytest.raises(JudgeError, match="did not answer within 2 s; its process group was killed"):
        judge.judge(REQUEST)
    assert time.monotonic() - started < 15
    got = json.loads(record.read_text())
    child = int(Path(str(script) + ".child").read_text())
    assert got["pgid"] == got["pid"] != os.getpgid(0)  # it ran in a group of its own, not ours
    deadline = time.monotonic() + 10
    while _alive_in_group(got["pgid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_in_group(got["pgid"]) == []
    assert not Path(f"/proc/{child}").exists() or (Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX")


def test_a_missing_cli_is_a_clear_unavailable_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JudgeUnavailableError, match="'claude' command, which is not on PATH; install Claude Code"):
        make_judge(JudgeConfig(backend="claude-cli"))
    with pytest.raises(JudgeUnavailableError, match="not on PATH"):
        judge_for(tmp_path / "missing-claude")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('answer("Credit balance is too low", subtype="error_during_execution", is_error=True)\n', "reported an error"),
        ('print("Error: not logged in", file=sys.stderr); sys.exit(1)\n', "exited with 1: Error: not logged in"),
        ('print("this is not json")\n', "not its JSON result object"),
        ('answer("I think it is fine")\n', "no 'SCORE"),
        ('answer("SCORE: 7")\n', r"outside \[0, 1\]"),
        ('print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": None}))\n', "not text"),
    ],
)
def test_cli_failures_are_judge_errors(tmp_path, body, message):
    script, _ = make_cli(tmp_path, body)
    with pytest.raises(JudgeError, match=message):
        judge_for(script).judge(REQUEST)


def test_retries_reach_a_cli_that_recovers(tmp_path):
    script, _ = make_cli(
        tmp_path,
        """
        marker = sys.argv[0] + ".calls"
        calls = int(open(marker).read()) if os.path.exists(marker) else 0
        open(marker, "w").write(str(calls + 1))
        if calls == 0:
            print("Error: overloaded", file=sys.stderr); sys.exit(1)
        answer("SCORE: 0.6")
        """,
    )
    verdict, error = run_judge(judge_for(script), REQUEST, max_attempts=3, backoff_initial_s=0.05)
    assert error is None and verdict.score == 0.6 and verdict.attempts == 2
