"""The model-client registry: a spec kind -> a factory of :class:`~terminal_agent.interfaces.ModelClient`.

Every entry has the same signature, ``factory(config: ModelClientConfig) -> ModelClient``, and says which
specs pick it: its exact name, a ``prefix`` whose rest fills one config field (``scripted:FILE`` fills
``replies_file``), a ``matches`` test on the whole spec (a model directory picks ``local``), or, for the single
``fallback`` entry, any other spec (litellm model strings).
A plugin adds a client kind with one decorator line:

>>> from terminal_agent.models.scripted import ScriptedModelClient
>>> @register_model_client("always-done")
... def build_always_done(config):
...     return ScriptedModelClient(lambda messages: "<finish>\\nmessage: done\\n</finish>")
>>> MODEL_CLIENTS.get("always-done").factory is build_always_done
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelClient
from terminal_agent.models.adapter_loading import is_model_directory
from terminal_agent.registry import Registry

if TYPE_CHECKING:
    from terminal_agent.models.embedded import EmbeddedModelClient

EMBEDDED_SPEC = "embedded"

ModelClientFactory = Callable[["ModelClientConfig"], ModelClient]


@dataclass(frozen=True)
class ModelClientEntry:
    """One registered client kind: its factory and the specs that pick it."""

    name: str
    """The kind, as ``ModelClientConfig.type`` spells it; a spec equal to it picks this entry."""
    factory: ModelClientFactory
    """Builds the client from the typed config."""
    prefix: str | None = None
    """Specs starting with this pick the entry; the rest of the spec goes into ``spec_field``."""
    spec_field: str | None = None
    """The ``ModelClientConfig`` field that receives the spec's argument (with ``prefix`` or ``fallback``)."""
    fallback: bool = False
    """Whether a spec no other entry matches picks this entry (the whole spec goes into ``spec_field``)."""
    matches: Callable[[str], bool] | None = None
    """Specs for which this returns True pick the entry (after names and prefixes, before the fallback); the
    whole spec goes into ``spec_field``."""


MODEL_CLIENTS: Registry[ModelClientEntry] = Registry("model client")


class ModelClientConfig(BaseModel):
    """Which model to talk to and how (the ``type`` field picks the registered client kind)."""

    model_config = ConfigDict(extra="forbid")

    type: str = EMBEDDED_SPEC
    """Client kind, a name in ``MODEL_CLIENTS``: ``embedded``, ``embedded-batched``, ``embedded-continuous``,
    ``vllm``, ``scripted``, ``litellm`` or a plugin's."""
    model: str | None = None
    """litellm model string (``type=litellm``; ``None`` reads ``LITELLM_MODEL``), the model directory of
    ``type=vllm`` (``None``: the embedded model), or a plugin's model name."""
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
    adapter: Path | None = None
    """``type=local``: a LoRA adapter of the local trainer on ``model`` (a checkpoint, its ``adapter/`` or a run
    directory: its latest checkpoint); ``None``: the base alone."""
    device: Literal["cpu", "cuda", "auto"] | None = None
    """``type=local``: where the model runs; ``None`` or ``auto`` picks CUDA when available."""
    dtype: Literal["float32", "bfloat16", "float16"] | None = None
    """``type=local``: the weights' dtype while sampling (``None``: float32)."""
    slots: int | None = Field(default=None, ge=1)
    """``type=local``: concurrent episodes the sampler decodes together (``None``: 1)."""

    @field_validator("type")
    @classmethod
    def _registered_type(cls, name: str) -> str:
        MODEL_CLIENTS.get(name)  # raises ConfigError listing the valid names
        return name


def register_model_client(
    name: str, *, prefix: str | None = None, spec_field: str | None = None, fallback: bool = False,
    matches: Callable[[str], bool] | None = None,
) -> Callable[[ModelClientFactory], ModelClientFactory]:
    """Register ``factory(config) -> ModelClient`` as the client kind ``name`` (returns the factory unchanged).

    Raises :class:`ConfigError` for a duplicate name or prefix, a second fallback, or a ``prefix``/``fallback``
    without the ``spec_field`` that receives the spec's argument.
    """
    if prefix == "":
        raise ConfigError(f"model client {name!r}: prefix must not be empty")
    if (prefix is not None or fallback or matches is not None) and not spec_field:
        raise ConfigError(f"model client {name!r}: a prefix, matches or fallback entry needs spec_field")

    def decorator(factory: ModelClientFactory) -> ModelClientFactory:
        for other in _entries():
            if prefix is not None and other.prefix == prefix:
                raise ConfigError(f"model client {name!r}: prefix {prefix!r} is already taken by {other.name!r}")
            if fallback and other.fallback:
                raise ConfigError(f"model client {name!r}: {other.name!r} is already the fallback")
        entry = ModelClientEntry(name, factory, prefix=prefix, spec_field=spec_field, fallback=fallback, matches=matches)
        MODEL_CLIENTS.register(name)(entry)
        return factory

    return decorator


def _entries() -> list[ModelClientEntry]:
    return [MODEL_CLIENTS.get(name) for name in MODEL_CLIENTS]


def _picked(entry: ModelClientEntry, argument: str) -> dict[str, Any]:
    """The values of a spec that picked ``entry`` by prefix, matches or fallback: the argument goes into its
    ``spec_field`` (which :func:`register_model_client` requires of such an entry)."""
    assert entry.spec_field is not None
    return {"type": entry.name, entry.spec_field: argument}


def spec_values(spec: str) -> dict[str, Any]:
    """The ``ModelClientConfig`` values a spec stands for: exact name, then the longest prefix, then the fallback."""
    if spec in MODEL_CLIENTS:
        return {"type": spec}
    prefixed = sorted((e for e in _entries() if e.prefix), key=lambda e: len(e.prefix or ""), reverse=True)
    for entry in prefixed:
        if spec.startswith(entry.prefix or ""):
            return _picked(entry, spec[len(entry.prefix or "") :])
    for entry in _entries():
        if entry.matches is not None and entry.matches(spec):
            return _picked(entry, spec)
    for entry in _entries():
        if entry.fallback:
            return _picked(entry, spec)
    valid = ", ".join([*MODEL_CLIENTS.names(), *(f"{e.prefix}..." for e in prefixed)])
    raise ConfigError(f"no model client matches spec {spec!r}; valid: {valid}")


# --- the built-in entries -------------------------------------------------------------------
def _embedded_client(config: ModelClientConfig) -> EmbeddedModelClient:
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

    settings: dict[str, Any] = {}
    if config.max_tokens is not None:
        settings["max_new_tokens"] = config.max_tokens
    if config.temperature is not None:
        settings["temperature"] = config.temperature
    return EmbeddedModelClient(EmbeddedModelConfig(**settings))


@register_model_client("embedded")
def build_embedded(config: ModelClientConfig) -> ModelClient:
    """SmolLM2 in-process, one call at a time (the default with no model configured)."""
    return _embedded_client(config)


@register_model_client("embedded-batched")
def build_embedded_batched(config: ModelClientConfig) -> ModelClient:
    """The embedded model; concurrent calls gathered into batches decoded together with a KV cache."""
    from terminal_agent.models.batched_generation import BatchedEmbeddedClient

    return BatchedEmbeddedClient.from_embedded(_embedded_client(config))


@register_model_client("embedded-continuous")
def build_embedded_continuous(config: ModelClientConfig) -> ModelClient:
    """The embedded model with continuous batching: a call joins the running batch at the next step."""
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient

    return ContinuousBatchingClient.from_embedded(_embedded_client(config))


@register_model_client("vllm", prefix="vllm:", spec_field="model")
def build_vllm(config: ModelClientConfig) -> ModelClient:
    """vLLM's offline engine in-process on a CUDA GPU: ``vllm`` samples the embedded model, ``vllm:DIR`` a
    transformers directory (its own weights). Needs vLLM installed (a ``ConfigError`` says what to install)."""
    from terminal_agent.models.vllm_sampler import VLLMSamplerConfig, require_vllm, vllm_client_for_directory

    require_vllm("model client 'vllm'")
    if config.model:
        directory = Path(config.model).expanduser()
        if not (directory / "config.json").is_file():
            raise ConfigError(f"model client 'vllm': {config.model!r} is not a transformers directory (no config.json)")
    else:
        from terminal_agent.models.embedded import ensure_embedded_model_cached

        directory = ensure_embedded_model_cached()
    settings: dict[str, Any] = {}
    if config.max_tokens is not None:
        settings["max_new_tokens"] = config.max_tokens
    if config.temperature is not None:
        settings["temperature"] = config.temperature
    return vllm_client_for_directory(directory, VLLMSamplerConfig(**settings))


@register_model_client("local", spec_field="model", matches=is_model_directory)
def build_local(config: ModelClientConfig) -> ModelClient:
    """A local model through the local trainer's own sampler: ``model`` is ``embedded`` or a transformers
    directory (a spec that is a model directory picks this entry), with the trainer's LoRA ``adapter`` on it
    when set; ``device``, ``dtype``, ``slots`` and ``max_tokens`` say how it samples. Needs torch."""
    from terminal_agent.models.adapter_loading import LOCAL_MODEL_SPEC, LocalModelConfig
    from terminal_agent.models.local_model_sampling import DEFAULT_LOCAL_MAX_TOKENS, local_model_client

    local = LocalModelConfig(model=config.model or LOCAL_MODEL_SPEC, adapter=config.adapter,
                             device=config.device or "auto", dtype=config.dtype or "float32")
    return local_model_client(local, max_new_tokens=config.max_tokens or DEFAULT_LOCAL_MAX_TOKENS,
                              concurrency=config.slots or 1)


@register_model_client("scripted", prefix="scripted:", spec_field="replies_file")
def build_scripted(config: ModelClientConfig) -> ModelClient:
    """Replies from a JSON/YAML list of strings, in order (tests and oracle runs)."""
    from terminal_agent.models.scripted import ScriptedModelClient

    return ScriptedModelClient(load_scripted_replies(config.replies_file))


@register_model_client("litellm", spec_field="model", fallback=True)
def build_litellm(config: ModelClientConfig) -> ModelClient:
    """Any litellm provider or OpenAI-compatible server (the spec is the litellm model string)."""
    from terminal_agent.models.litellm_client import LiteLLMConfig, LiteLLMModelClient

    lite = LiteLLMConfig.from_env(
        model=config.model, api_base=config.api_base, api_key=config.api_key, temperature=config.temperature
    )
    if config.max_tokens is not None:
        lite = lite.model_copy(update={"max_tokens": config.max_tokens})
    return LiteLLMModelClient(lite)


def load_scripted_replies(path: Path | None) -> list[str]:
    """The reply strings of a scripted-model file: :func:`terminal_agent.models.scripted.load_replies_file`
    (a :class:`ConfigError` naming the file and the entry when it is not a list of strings)."""
    from terminal_agent.models.scripted import load_replies_file

    return load_replies_file(path)


__all__ = [
    "MODEL_CLIENTS",
    "ModelClientEntry",
    "ModelClientFactory",
    "load_scripted_replies",
    "is_model_directory",
    "register_model_client",
    "spec_values",
]
