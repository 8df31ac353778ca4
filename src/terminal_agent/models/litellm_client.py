"""litellm client: any provider litellm knows, or any OpenAI-compatible endpoint (``openai/NAME`` + ``api_base``).

litellm is imported on first use (it takes ~4 s), with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` so
the import never reaches for the network. Transient provider failures are retried with
exponential backoff; what is left after the retries is raised as
:class:`~terminal_agent.errors.ModelProviderError` - an infrastructure error, never the agent's failure.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import ConfigError, ModelProviderError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.models.base import ContextWindowExceededError

logger = logging.getLogger(__name__)

ENV_MODEL = "LITELLM_MODEL"
ENV_API_BASE = "LITE_LLM_API_BASE"
ENV_API_KEY = "LITE_LLM_API_KEY"

_IMPORT_LOCK = threading.Lock()

# litellm exception class names that a retry cannot fix (the request itself is wrong).
_PERMANENT_ERRORS = (
    "AuthenticationError",
    "PermissionDeniedError",
    "BadRequestError",
    "NotFoundError",
    "UnsupportedParamsError",
    "UnprocessableEntityError",
    "ContentPolicyViolationError",
    "InvalidRequestError",
)


def import_litellm() -> Any:
    """Import litellm without network access at import time (cost map from the package)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with _IMPORT_LOCK:
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True  # providers without e.g. ``seed`` get the call without it
    return litellm


class LiteLLMConfig(BaseModel):
    """Settings of a litellm-backed model client."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """litellm model string, e.g. ``anthropic/claude-sonnet-4-5`` or ``openai/NAME`` for an OpenAI-compatible server."""
    api_base: str | None = None
    """Endpoint URL (``http://host:port/v1`` for an OpenAI-compatible server); ``None`` uses the provider's."""
    api_key: str | None = Field(default=None, repr=False)
    """Key for the endpoint; ``None`` lets litellm read the provider's usual variable."""
    temperature: float | None = Field(default=None, ge=0.0)
    """Default sampling temperature (``None``: the provider's default)."""
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    """Default nucleus mass (``None``: the provider's default)."""
    max_tokens: int | None = Field(default=1024, ge=1)
    """Default cap on reply tokens."""
    timeout_s: float = Field(default=120.0, gt=0.0)
    """Per-request timeout."""
    max_retries: int = Field(default=4, ge=0)
    """Retries of transient failures (rate limits, connection errors, 5xx) before giving up."""
    backoff_initial_s: float = Field(default=1.0, ge=0.0)
    """First retry delay; doubles each retry (with jitter)."""
    backoff_max_s: float = Field(default=30.0, ge=0.0)
    """Cap on one retry delay."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Other keyword arguments passed to ``litellm.completion`` unchanged."""

    @classmethod
    def from_env(cls, **overrides: Any) -> "LiteLLMConfig":
        """Build from ``LITELLM_MODEL``, ``LITE_LLM_API_BASE``, ``LITE_LLM_API_KEY`` (overrides win)."""
        values: dict[str, Any] = {
            "model": os.environ.get(ENV_MODEL) or None,
            "api_base": os.environ.get(ENV_API_BASE) or None,
            "api_key": os.environ.get(ENV_API_KEY) or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if not values.get("model"):
            raise ConfigError(f"no model given: set {ENV_MODEL} or pass --model")
        return cls(**values)


class LiteLLMModelClient:
    """:class:`~terminal_agent.interfaces.ModelClient` over ``litellm.completion``.

    Per-call sampling keywords (``temperature``, ``top_p``, ``max_tokens``, ``stop``, ``seed`` and
    anything else litellm accepts) override the config's defaults.
    """

    is_thread_safe = True

    def __init__(self, config: LiteLLMConfig):
        self.config = config
        self.name = config.model
        self._litellm: Any = None

    def _module(self) -> Any:
        if self._litellm is None:
            self._litellm = import_litellm()
        return self._litellm

    def _request(self, messages: list[dict[str, str]], sampling: dict[str, Any]) -> dict[str, Any]:
        config = self.config
        request: dict[str, Any] = {"model": config.model, "messages": messages, "timeout": config.timeout_s}
        if config.api_base:
            request["api_base"] = config.api_base
        if config.api_key:
            request["api_key"] = config.api_key
        for key in ("temperature", "top_p", "max_tokens"):
            value = getattr(config, key)
            if value is not None:
                request[key] = value
        request.update(config.extra)
        request.update({k: v for k, v in sampling.items() if v is not None})
        request["num_retries"] = 0  # retries are ours, so they are logged and bounded in one place
        return request

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        litellm = self._module()
        request = self._request(messages, sampling)
        attempts = self.config.max_retries + 1
        delay = self.config.backoff_initial_s
        for attempt in range(1, attempts + 1):
            started = time.monotonic()
            try:
                response = litellm.completion(**request)
            except Exception as exc:  # noqa: BLE001 - sorted into retryable / permanent below
                name = type(exc).__name__
                if name == "ContextWindowExceededError":
                    raise ContextWindowExceededError(f"{self.name}: {exc}") from exc
                if name in _PERMANENT_ERRORS or attempt == attempts:
                    raise ModelProviderError(f"{self.name}: {name}: {exc} (after {attempt} attempt(s))") from exc
                sleep = min(delay, self.config.backoff_max_s) * (0.5 + random.random() / 2)
                logger.warning("%s: %s on attempt %d/%d; retrying in %.1f s", self.name, name, attempt, attempts, sleep)
                time.sleep(sleep)
                delay *= 2
                continue
            return _to_model_response(response, time.monotonic() - started)
        raise AssertionError("unreachable")  # pragma: no cover


def _to_model_response(response: Any, latency_s: float) -> ModelResponse:
    try:
        choice = response.choices[0]
        text = choice.message.content or ""
        finish_reason = choice.finish_reason or "stop"
    except (AttributeError, IndexError, TypeError) as exc:
        raise ModelProviderError(f"malformed completion response: {exc}") from exc
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    prompt_ids, completion_ids, logprobs = _token_fields(response, choice)
    return ModelResponse(
        text=text,
        finish_reason="length" if finish_reason == "length" else "stop",
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        latency_s=latency_s,
        prompt_ids=prompt_ids,
        completion_ids=completion_ids,
        logprobs=logprobs,
    )


def _token_fields(response: Any, choice: Any) -> tuple[list[int] | None, list[int] | None, list[float] | None]:
    """Token ids and logprobs where the provider returned them (each ``None`` otherwise).

    - logprobs: OpenAI-style ``choice.logprobs.content[i].logprob`` (ask with ``logprobs=True``);
    - completion ids: ``choice.token_ids`` (vLLM's ``return_token_ids``), else tokens spelled
      ``token_id:N`` (vLLM's ``return_tokens_as_token_ids``);
    - prompt ids: ``response.prompt_token_ids`` (vLLM's ``return_token_ids``).
    Ids and logprobs of different lengths are not trusted together: the logprobs are dropped.
    """
    content = _field(_field(choice, "logprobs"), "content")
    logprobs: list[float] | None = None
    tokens: list[Any] = []
    if isinstance(content, list) and content:
        values = [_field(entry, "logprob") for entry in content]
        if all(isinstance(v, (int, float)) for v in values):
            logprobs = [float(v) for v in values]
        tokens = [_field(entry, "token") for entry in content]
    completion_ids = _int_list(_field(choice, "token_ids"))
    if completion_ids is None and tokens and all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
        completion_ids = _int_list([t[len("token_id:"):] for t in tokens])
    if completion_ids is not None and logprobs is not None and len(completion_ids) != len(logprobs):
        logprobs = None
    return _int_list(_field(response, "prompt_token_ids")), completion_ids, logprobs


def _field(value: Any, name: str) -> Any:
    """``value.name`` or ``value[name]`` (providers hand back objects or plain dicts), else None."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def _int_list(values: Any) -> list[int] | None:
    if not isinstance(values, (list, tuple)) or not values:
        return None
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):  # not ids after all: report none rather than wrong ones
        return None
