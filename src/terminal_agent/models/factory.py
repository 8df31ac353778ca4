"""Pick a model client from a short spec, a typed config or the environment.

Specs: ``embedded`` (the in-process SmolLM2), ``embedded-batched`` (the same, concurrent calls decoded
together), ``scripted:FILE`` (replies from a JSON/YAML list,
for tests and oracle runs) or any litellm model string (``openai/NAME``, ``anthropic/...``).
With no spec, ``LITELLM_MODEL`` picks litellm and its absence picks the embedded model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelClient
from terminal_agent.models.litellm_client import ENV_MODEL, LiteLLMConfig, LiteLLMModelClient

EMBEDDED_SPEC = "embedded"
EMBEDDED_BATCHED_SPEC = "embedded-batched"
SCRIPTED_PREFIX = "scripted:"


class ModelClientConfig(BaseModel):
    """Which model to talk to and how (the ``type`` field picks the backend)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["embedded", "litellm", "scripted"] = "embedded"
    """Backend: the in-process embedded model, litellm, or scripted replies."""
    model: str | None = None
    """litellm model string (``type=litellm``); ``None`` reads ``LITELLM_MODEL``."""
    api_base: str | None = None
    """litellm endpoint; ``None`` reads ``LITE_LLM_API_BASE``."""
    api_key: str | None = Field(default=None, repr=False)
    """litellm key; ``None`` reads ``LITE_LLM_API_KEY``."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Cap on reply tokens (``None``: the backend's default)."""
    temperature: float | None = Field(default=None, ge=0.0)
    """Sampling temperature (``None``: the backend's default; the embedded model is greedy at 0)."""
    replies_file: Path | None = None
    """Scripted backend: a JSON/YAML list of reply strings."""
    batched: bool = False
    """Embedded backend: decode concurrent calls together (``BatchedEmbeddedClient``, KV cache) instead of one
    at a time; use it with a concurrency above 1 (spec ``embedded-batched``)."""


def describe_default_model() -> str:
    """What :func:`build_model_client` picks with no spec, for messages and reports."""
    return os.environ.get(ENV_MODEL) or EMBEDDED_SPEC


def config_from_spec(spec: str | None, **overrides: Any) -> ModelClientConfig:
    """Turn a CLI spec (or ``None``: the environment's choice) into a :class:`ModelClientConfig`."""
    spec = (spec or "").strip() or describe_default_model()
    values = {k: v for k, v in overrides.items() if v is not None}
    if spec == EMBEDDED_SPEC:
        return ModelClientConfig(type="embedded", **values)
    if spec == EMBEDDED_BATCHED_SPEC:
        return ModelClientConfig(type="embedded", batched=True, **values)
    if spec.startswith(SCRIPTED_PREFIX):
        return ModelClientConfig(type="scripted", replies_file=Path(spec[len(SCRIPTED_PREFIX):]), **values)
    return ModelClientConfig(type="litellm", model=spec, **values)


def build_model_client(config: ModelClientConfig | str | None = None) -> ModelClient:
    """A ready :class:`~terminal_agent.interfaces.ModelClient` for ``config`` (a spec string works too)."""
    if not isinstance(config, ModelClientConfig):
        config = config_from_spec(config)
    if config.type == "embedded":
        from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

        embedded: dict[str, Any] = {}
        if config.max_tokens is not None:
            embedded["max_new_tokens"] = config.max_tokens
        if config.temperature is not None:
            embedded["temperature"] = config.temperature
        client = EmbeddedModelClient(EmbeddedModelConfig(**embedded))
        if config.batched:
            from terminal_agent.models.batched_generation import BatchedEmbeddedClient

            return BatchedEmbeddedClient.from_embedded(client)
        return client
    if config.type == "litellm":
        lite = LiteLLMConfig.from_env(
            model=config.model, api_base=config.api_base, api_key=config.api_key, temperature=config.temperature
        )
        if config.max_tokens is not None:
            lite = lite.model_copy(update={"max_tokens": config.max_tokens})
        return LiteLLMModelClient(lite)
    if config.type == "scripted":
        return _scripted_client(config)
    raise ConfigError(f"unknown model client type {config.type!r}")  # pragma: no cover - Literal guards it


def _scripted_client(config: ModelClientConfig) -> ModelClient:
    from terminal_agent.models.scripted import ScriptedModelClient

    path = config.replies_file
    if path is None or not path.is_file():
        raise ConfigError(f"scripted model: replies file {path} does not exist")
    text = path.read_text()
    if path.suffix in {".yaml", ".yml"}:
        import yaml

        replies = yaml.safe_load(text)
    else:
        replies = json.loads(text)
    if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
        raise ConfigError(f"scripted model: {path} must hold a list of reply strings")
    return ScriptedModelClient(replies)
