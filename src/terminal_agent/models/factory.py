"""Pick a model client from a short spec, a typed config or the environment.

Specs are resolved through the registry in :mod:`terminal_agent.models.client_registry`: ``embedded``
(the in-process SmolLM2), ``embedded-batched`` (the same, concurrent calls decoded together),
``embedded-continuous`` (continuous batching), ``scripted:FILE`` (replies from a JSON/YAML list, for tests
and oracle runs), a plugin's name or prefix, or else any litellm model string (``openai/NAME``,
``anthropic/...``). With no spec, ``LITELLM_MODEL`` picks litellm and its absence picks the embedded model.
"""

from __future__ import annotations

import os
from typing import Any

from terminal_agent.interfaces import ModelClient
from terminal_agent.models.client_registry import EMBEDDED_SPEC, MODEL_CLIENTS, ModelClientConfig, spec_values

__all__ = ["EMBEDDED_SPEC", "ModelClientConfig", "build_model_client", "config_from_spec", "describe_default_model"]
from terminal_agent.models.litellm_client import ENV_MODEL

def describe_default_model() -> str:
    """What :func:`build_model_client` picks with no spec, for messages and reports."""
    return os.environ.get(ENV_MODEL) or EMBEDDED_SPEC


def config_from_spec(spec: str | None, **overrides: Any) -> ModelClientConfig:
    """Turn a CLI spec (or ``None``: the environment's choice) into a :class:`ModelClientConfig`.

    ``overrides`` set other config fields; ``None`` values are ignored.
    """
    spec = (spec or "").strip() or describe_default_model()
    values = {k: v for k, v in overrides.items() if v is not None}
    return ModelClientConfig(**{**values, **spec_values(spec)})


def build_model_client(config: ModelClientConfig | str | None = None) -> ModelClient:
    """A ready :class:`~terminal_agent.interfaces.ModelClient` for ``config`` (a spec string works too).

    Raises :class:`~terminal_agent.errors.ConfigError` for an unknown ``type`` (listing the valid ones) and
    whatever the entry's factory raises for a bad setting (a missing replies file, no litellm model).
    """
    if not isinstance(config, ModelClientConfig):
        config = config_from_spec(config)
    return MODEL_CLIENTS.get(config.type).factory(config)
