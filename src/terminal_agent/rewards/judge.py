"""The LLM judge: its config, the Judge protocol, a registry of backends, and retries.

A judge reads the task, what the agent did and the test results, and answers with a score in
[0, 1] (the prompt and the strict parsing are in :mod:`terminal_agent.rewards.judge_prompt`).
A judge that fails - an unreachable provider, a CLI that hangs, a reply without a valid score -
raises :class:`~terminal_agent.errors.JudgeError`; the judge part of the sample is then *not
scored* (see :mod:`terminal_agent.rewards.reward`), never read as 0.

Backends are registered by name in :data:`JUDGE_BACKENDS`; every entry is a factory
``(config: JudgeConfig, client: ModelClient | None) -> Judge``:

* ``litellm`` - any provider litellm knows, configured like eval (``LITELLM_MODEL``,
  ``LITE_LLM_API_BASE``, ``LITE_LLM_API_KEY``; ``model`` in the config wins);
* ``claude-cli`` - the Claude Code CLI in print mode, prompt on stdin;
* ``local`` - the embedded model, in this process;
* ``model`` - any :class:`~terminal_agent.interfaces.ModelClient` handed over in code;
* ``none`` - no judge: the reward is the test score.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Protocol, runtime_checkable

from pydantic import ConfigDict, Field

from terminal_agent.backend_settings import BackendSettingsHost
from terminal_agent.errors import JudgeError, JudgeUnavailableError, ModelProviderError
from terminal_agent.interfaces import ModelClient, ModelResponse
from terminal_agent.registry import Registry
from terminal_agent.rewards.judge_prompt import RUBRIC_PROMPT, judge_reasoning, parse_judge_score, render_judge_prompt

logger = logging.getLogger(__name__)

DEFAULT_RUBRIC = RUBRIC_PROMPT
"""Kept for callers of the first version of this module."""
NO_JUDGE = "none"
"""The backend name that turns the judge off."""


class JudgeConfig(BackendSettingsHost):
    """Which judge backend to use and how to ask it (used only when the judge weight is above 0).

    Besides these fields it holds one section per registered backend with settings (``litellm``, ``claude_cli``,
    ``local``), each declared in the backend's module, validated by the model its registry line names
    (:mod:`terminal_agent.backend_settings`) and read by the backend with ``backend_settings(name, Model)``."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)  # the backends' sections; other keys are refused

    backend_registry: ClassVar[Registry[Any]]  # JUDGE_BACKENDS, set below its definition

    backend: str = "litellm"
    """Name in ``JUDGE_BACKENDS``: ``litellm``, ``claude-cli``, ``local``, ``model`` (a client given in code) or ``none``."""
    model: str | None = None
    """Model of the backend (litellm model string, Claude model alias); ``None``: ``LITELLM_MODEL`` / the CLI's default."""
    rubric: str = DEFAULT_RUBRIC
    """Prompt template with ``{instruction}``, ``{transcript}`` and ``{tests}`` placeholders."""
    max_transcript_chars: int = Field(12000, ge=500)
    """The transcript is cut in the middle to this many characters."""
    temperature: float = Field(0.0, ge=0.0)
    """Sampling temperature of model backends."""
    max_tokens: int = Field(256, ge=16)
    """Output limit of model backends."""
    timeout_s: float = Field(120.0, gt=0.0)
    """Wall clock of one judge call (the CLI's process group is killed past it)."""
    max_attempts: int = Field(3, ge=1)
    """Calls per episode before the judge counts as failed (a reply without a valid score is retried too)."""
    backoff_initial_s: float = Field(1.0, ge=0.0)
    """Delay before the second attempt; doubles each attempt (with jitter)."""
    backoff_max_s: float = Field(20.0, ge=0.0)
    """Cap on one delay between attempts."""
    control_file: Path | None = None
    """Absolute path of the hot-switch control file; ``None`` reads ``TERMINAL_AGENT_JUDGE_CONTROL`` (unset: no switch)."""

    def prompt_for(self, request: "JudgeRequest") -> str:
        """The rendered rubric for ``request``."""
        return render_judge_prompt(
            request.instruction,
            request.transcript,
            request.test_summary,
            rubric=self.rubric,
            max_transcript_chars=self.max_transcript_chars,
        )


@dataclass
class JudgeRequest:
    """What the judge sees."""

    instruction: str
    """The task's instruction, as the agent got it."""
    transcript: str = ""
    """The agent's replies and their results, turn by turn."""
    test_summary: str = ""
    """One line on the tests (``3/4 tests passed, weighted score 0.75``)."""


@dataclass
class JudgeVerdict:
    """One judge answer."""

    score: float
    """In [0, 1]."""
    reasoning: str = ""
    """The judge's reply without its SCORE line."""
    raw: str = ""
    """The judge's whole reply."""
    backend: str = ""
    """Which judge answered (``litellm:openai/gpt-4o``, ``claude-cli:sonnet``, ``local:...``)."""
    latency_s: float = 0.0
    """Wall clock of the successful call."""
    cost_usd: float | None = None
    """What the call cost when the backend says (None: unknown; 0 for the local model)."""
    attempts: int = 1
    """Calls it took (retries included)."""
    details: dict[str, Any] = field(default_factory=dict)
    """Backend-specific extras (token counts, CLI duration)."""


@runtime_checkable
class Judge(Protocol):
    """Scores one episode; raises :class:`JudgeError` when it cannot."""

    name: str

    def judge(self, request: JudgeRequest) -> JudgeVerdict: ...


JudgeFactory = Callable[[JudgeConfig, "ModelClient | None"], Judge]
JUDGE_BACKENDS: Registry[JudgeFactory] = Registry("judge backend", companions=("settings",))
"""Name -> judge factory: one line per backend, naming its factory (its module under ``judge_backends/`` is
imported on first use) and, for a backend with settings, their model (``settings=``: ``JudgeConfig`` holds them
as the section ``judge.NAME``, ``-`` written ``_``). A new backend is one module there plus one line here; a
backend defined elsewhere registers its factory (``JUDGE_BACKENDS.register("name", settings=Model)(make_judge)``)."""
JudgeConfig.backend_registry = JUDGE_BACKENDS

_BACKENDS = "terminal_agent.rewards.judge_backends"
JUDGE_BACKENDS.register_path("claude-cli", f"{_BACKENDS}.claude_cli_judge:make_claude_cli_judge",
                             settings=f"{_BACKENDS}.claude_cli_judge:ClaudeCliJudgeOptions")
JUDGE_BACKENDS.register_path("litellm", f"{_BACKENDS}.litellm_judge:make_litellm_judge",
                             settings=f"{_BACKENDS}.litellm_judge:LiteLLMJudgeOptions")
JUDGE_BACKENDS.register_path("local", f"{_BACKENDS}.local_judge:make_local_judge",
                             settings=f"{_BACKENDS}.local_judge:LocalJudgeOptions")
JUDGE_BACKENDS.register_path("model", "terminal_agent.rewards.judge:make_model_judge")
JUDGE_BACKENDS.register_path(NO_JUDGE, f"{_BACKENDS}.no_judge:make_no_judge")


class ModelClientJudge:
    """A judge on top of any :class:`~terminal_agent.interfaces.ModelClient` (litellm, embedded, scripted).

    ``cost_of(response)`` prices a reply when the backend can (None: unknown).
    """

    def __init__(
        self,
        client: ModelClient,
        config: JudgeConfig | None = None,
        *,
        name: str | None = None,
        cost_of: Callable[[ModelResponse], float | None] | None = None,
    ):
        self.client = client
        self.config = config or JudgeConfig()
        self.name = name or f"model:{getattr(client, 'name', type(client).__name__)}"
        self._cost_of = cost_of

    def build_messages(self, request: JudgeRequest) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.config.prompt_for(request)}]

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        started = time.monotonic()
        try:
            response = self.client.complete(
                self.build_messages(request), temperature=self.config.temperature, max_tokens=self.config.max_tokens
            )
        except ModelProviderError as exc:
            raise JudgeError(f"the judge model failed: {exc}") from exc
        score = parse_judge_score(response.text)
        return JudgeVerdict(
            score=score,
            reasoning=judge_reasoning(response.text),
            raw=response.text,
            backend=self.name,
            latency_s=time.monotonic() - started,
            cost_usd=self._cost_of(response) if self._cost_of else None,
            details={"prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens},
        )


def make_model_judge(config: JudgeConfig, client: ModelClient | None = None) -> Judge:
    """The ``model`` backend: a judge on the ModelClient handed over in code."""
    if client is None:
        raise JudgeUnavailableError("the 'model' judge backend needs a ModelClient handed over in code")
    return ModelClientJudge(client, config)


def run_judge(
    judge: Judge,
    request: JudgeRequest,
    *,
    max_attempts: int = 1,
    backoff_initial_s: float = 1.0,
    backoff_max_s: float = 20.0,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[JudgeVerdict | None, str | None]:
    """(verdict, None) or (None, error text) after up to ``max_attempts`` calls with exponential backoff.

    Judge failures never escape as exceptions. :class:`JudgeUnavailableError` (nothing to retry
    against: a missing CLI, no model named) stops at once.
    """
    delay = backoff_initial_s
    error = "no judge call was made"
    for attempt in range(1, max_attempts + 1):
        try:
            verdict = judge.judge(request)
            verdict.attempts = attempt
            return verdict, None
        except JudgeUnavailableError as exc:
            logger.warning("judge %s cannot run: %s", getattr(judge, "name", judge), exc)
            return None, str(exc)
        except JudgeError as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a judge bug must not take the rollout down; recorded as judge_error
            logger.exception("judge %s crashed", getattr(judge, "name", judge))
            error = f"{type(exc).__name__}: {exc}"
        if attempt < max_attempts:
            pause = min(delay, backoff_max_s) * (0.5 + random.random() / 2)
            logger.warning(
                "judge %s failed on attempt %d/%d (%s); retrying in %.1f s",
                getattr(judge, "name", judge), attempt, max_attempts, error[:200], pause,
            )
            sleep(pause)
            delay *= 2
    if max_attempts > 1:
        error = f"{error} (after {max_attempts} attempts)"
    logger.warning("judge %s failed: %s", getattr(judge, "name", judge), error[:300])
    return None, error


__all__ = [
    "DEFAULT_RUBRIC",
    "JUDGE_BACKENDS",
    "NO_JUDGE",
    "Judge",
    "JudgeConfig",
    "JudgeRequest",
    "JudgeVerdict",
    "ModelClientJudge",
    "parse_judge_score",
    "run_judge",
]
