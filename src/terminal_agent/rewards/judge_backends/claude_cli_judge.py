"""``claude-cli``: the Claude Code CLI in non-interactive print mode.

Command: ``claude -p --output-format json [--model M] [extra args]``. The prompt goes through
**stdin**, never argv (one argv string is capped at 128 KiB on Linux, and argv is visible to every
user in ``ps``). The CLI answers with one JSON object, of which we read ``result`` (the reply
text), ``is_error``/``subtype`` (failure), ``total_cost_usd`` and ``duration_ms``.

The CLI runs in its own process group (session); past ``JudgeConfig.timeout_s`` the whole group
is killed with SIGKILL, and any straggler of a finished call is swept the same way. A CLI that
is not installed is a :class:`~terminal_agent.errors.JudgeUnavailableError` naming what to install.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import JudgeError, JudgeUnavailableError
from terminal_agent.interfaces import ModelClient
from terminal_agent.rewards.judge import JudgeConfig, JudgeRequest, JudgeVerdict
from terminal_agent.rewards.judge_prompt import judge_reasoning, parse_judge_score

logger = logging.getLogger(__name__)

INSTALL_HINT = "install Claude Code (npm install -g @anthropic-ai/claude-code) or set judge.claude_cli.executable"


class ClaudeCliJudgeOptions(BaseModel):
    """Settings of the ``claude-cli`` backend (the section ``judge.claude_cli``)."""

    model_config = ConfigDict(extra="forbid")

    executable: str = "claude"
    """The Claude Code CLI: a name looked up on PATH or a path."""
    extra_args: list[str] = Field(default_factory=list)
    """Arguments added after ``-p --output-format json [--model M]`` (e.g. ``["--max-turns", "1"]``)."""


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone (PermissionError: a zombie leader on some kernels)


def parse_cli_output(stdout: str) -> dict[str, Any]:
    """The CLI's JSON result object (the last JSON object line when there are several)."""
    text = stdout.strip()
    if not text:
        raise JudgeError("the claude CLI printed nothing on stdout")
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.strip().startswith("{")]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and "result" in data:
            return data
    raise JudgeError(f"the claude CLI's output is not its JSON result object: {text[-300:]!r}")


class ClaudeCliJudge:
    """Asks the Claude Code CLI; one subprocess per call."""

    def __init__(self, config: JudgeConfig, executable: str):
        self.config = config
        self.executable = executable
        self.name = f"claude-cli:{config.model or 'default'}"

    def command(self) -> list[str]:
        command = [self.executable, "-p", "--output-format", "json"]
        if self.config.model:
            command += ["--model", self.config.model]
        return command + list(self.config.backend_settings("claude-cli", ClaudeCliJudgeOptions).extra_args)

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        prompt = self.config.prompt_for(request)
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                self.command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout kills everything it started
                env=dict(os.environ),
            )
        except FileNotFoundError:
            raise JudgeUnavailableError(f"the claude CLI {self.executable!r} is not there; {INSTALL_HINT}") from None
        except PermissionError:
            raise JudgeUnavailableError(f"the claude CLI {self.executable!r} is not executable; {INSTALL_HINT}") from None
        try:
            stdout, stderr = process.communicate(prompt.encode(), timeout=self.config.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            try:
                process.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                pass  # a child that left the group still holds the pipes; the CLI itself is dead
            raise JudgeError(
                f"the claude CLI did not answer within {self.config.timeout_s:.0f} s; its process group was killed"
            ) from None
        finally:
            _kill_group(process.pid)  # sweep stragglers of a finished call too
        latency = time.monotonic() - started
        out = stdout.decode(errors="replace")
        if process.returncode != 0:
            err = stderr.decode(errors="replace").strip()
            raise JudgeError(f"the claude CLI exited with {process.returncode}: {(err or out)[-500:]}")
        data = parse_cli_output(out)
        text = data.get("result")
        if data.get("is_error") or data.get("subtype", "success") != "success":
            raise JudgeError(f"the claude CLI reported an error ({data.get('subtype')}): {str(text)[:300]}")
        if not isinstance(text, str):
            raise JudgeError(f"the claude CLI's 'result' is not text: {text!r:.200}")
        score = parse_judge_score(text)
        cost = data.get("total_cost_usd")
        return JudgeVerdict(
            score=score,
            reasoning=judge_reasoning(text),
            raw=text,
            backend=self.name,
            latency_s=latency,
            cost_usd=float(cost) if isinstance(cost, (int, float)) else None,
            details={"duration_ms": data.get("duration_ms"), "session_id": data.get("session_id")},
        )


def make_claude_cli_judge(config: JudgeConfig, client: ModelClient | None = None) -> ClaudeCliJudge:
    executable = config.backend_settings("claude-cli", ClaudeCliJudgeOptions).executable
    found = shutil.which(executable)
    if found is None:
        raise JudgeUnavailableError(f"the claude-cli judge needs the {executable!r} command, which is not on PATH; {INSTALL_HINT}")
    return ClaudeCliJudge(config, found)
