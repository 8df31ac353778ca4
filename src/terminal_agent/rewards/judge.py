"""The LLM judge: a protocol, a registry of backends and strict parsing of the judge's score.

A judge reads the task, a summary of what the agent did and the test results, and answers with a
score in [0, 1] on a line of its own::

    SCORE: 0.75

Anything else - no such line, two of them, a value outside [0, 1] - raises :class:`JudgeError`:
the judge part of the sample is then *not scored* (see :mod:`terminal_agent.rewards.reward`),
never read as 0. Backends are registered by name in :data:`JUDGE_BACKENDS`; every entry is a
factory ``(config: JudgeConfig, client: ModelClient | None) -> Judge``.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import JudgeError, ModelProviderError
from terminal_agent.interfaces import ModelClient
from terminal_agent.registry import Registry

logger = logging.getLogger(__name__)

SCORE_LINE = re.compile(r"^\s*SCORE\s*:\s*(\S+)\s*$", re.IGNORECASE | re.MULTILINE)

DEFAULT_RUBRIC = """You are grading an AI agent's work on a terminal task.

Task given to the agent:
{instruction}

What the agent did (its actions and their results, possibly shortened):
{transcript}

Automated test results: {tests}

Judge the quality of the work: did it solve the task as asked, cleanly and without shortcuts that
only satisfy the tests (hard-coded outputs, edited tests, disabled checks)? Answer with one or two
sentences of reasoning, then a last line exactly of the form
SCORE: <a number between 0 and 1>"""


class JudgeConfig(BaseModel):
    """Which judge backend to use and how to ask it."""

    model_config = ConfigDict(extra="forbid")

    backend: str = "model"
    """Name in ``JUDGE_BACKENDS`` (``model``: any ModelClient)."""
    rubric: str = DEFAULT_RUBRIC
    """Prompt template with ``{instruction}``, ``{transcript}`` and ``{tests}`` placeholders."""
    max_transcript_chars: int = Field(12000, ge=500)
    """The transcript is cut in the middle to this many characters."""
    temperature: float = Field(0.0, ge=0.0)
    """Sampling temperature passed to the model client."""
    max_tokens: int = Field(512, ge=16)
    """Output limit passed to the model client."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Backend-specific settings."""


@dataclass
class JudgeRequest:
    """What the judge sees."""

    instruction: str
    transcript: str = ""
    test_summary: str = ""


@dataclass
class JudgeVerdict:
    score: float
    reasoning: str = ""
    raw: str = ""
    backend: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Judge(Protocol):
    """Scores one episode; raises :class:`JudgeError` when it cannot."""

    name: str

    def judge(self, request: JudgeRequest) -> JudgeVerdict: ...


JUDGE_BACKENDS: Registry = Registry("judge backend")


def parse_judge_score(text: str) -> float:
    """The value of the single ``SCORE: x`` line of ``text``; :class:`JudgeError` otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise JudgeError("the judge returned an empty reply")
    matches = SCORE_LINE.findall(text)
    if not matches:
        raise JudgeError(f"no 'SCORE: <0..1>' line in the judge's reply: {text[-300:]!r}")
    if len(matches) > 1:
        raise JudgeError(f"the judge's reply has {len(matches)} SCORE lines; exactly one is required")
    raw = matches[0].rstrip(".")
    try:
        value = float(raw)
    except ValueError:
        raise JudgeError(f"the judge's score {raw!r} is not a number") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise JudgeError(f"the judge's score {value} is outside [0, 1]")
    return value


def _cut_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


class ModelClientJudge:
    """A judge on top of any :class:`~terminal_agent.interfaces.ModelClient` (litellm, embedded, scripted)."""

    def __init__(self, client: ModelClient, config: JudgeConfig | None = None):
        self.client = client
        self.config = config or JudgeConfig()
        self.name = f"model:{getattr(client, 'name', type(client).__name__)}"

    def build_messages(self, request: JudgeRequest) -> list[dict[str, str]]:
        prompt = self.config.rubric.format(
            instruction=request.instruction,
            transcript=_cut_middle(request.transcript or "(none)", self.config.max_transcript_chars),
            tests=request.test_summary or "(not run)",
        )
        return [{"role": "user", "content": prompt}]

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        try:
            response = self.client.complete(
                self.build_messages(request), temperature=self.config.temperature, max_tokens=self.config.max_tokens
            )
        except ModelProviderError as exc:
            raise JudgeError(f"the judge model failed: {exc}") from exc
        score = parse_judge_score(response.text)
        reasoning = SCORE_LINE.sub("", response.text).strip()
        return JudgeVerdict(score=score, reasoning=reasoning[:2000], raw=response.text, backend=self.name)


@JUDGE_BACKENDS.register("model")
def _model_backend(config: JudgeConfig, client: ModelClient | None = None) -> Judge:
    if client is None:
        raise JudgeError("the 'model' judge backend needs a ModelClient")
    return ModelClientJudge(client, config)


def make_judge(config: JudgeConfig | None = None, client: ModelClient | None = None) -> Judge:
    """Build the judge named by ``config.backend`` (unknown names list the valid ones)."""
    config = config or JudgeConfig()
    return JUDGE_BACKENDS.get(config.backend)(config, client)


def run_judge(judge: Judge, request: JudgeRequest) -> tuple[JudgeVerdict | None, str | None]:
    """(verdict, None) or (None, error text): judge failures never escape as exceptions."""
    try:
        return judge.judge(request), None
    except JudgeError as exc:
        logger.warning("judge %s failed: %s", getattr(judge, "name", judge), exc)
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - a judge bug must not take the rollout down
        logger.exception("judge %s crashed", getattr(judge, "name", judge))
        return None, f"{type(exc).__name__}: {exc}"
