"""Local models to evaluate or export: a base (``embedded`` or a transformers directory) with an
optional LoRA adapter trained by the local trainer.

An adapter is named by any of:

* a checkpoint of a run, ``RUN/checkpoints/step_N`` (or the run's ``warm_start``): its ``adapter/``;
* that ``adapter/`` directory itself (``adapter_config.json`` and ``adapter_model.safetensors``);
* a run directory (holding ``checkpoints/``): its latest checkpoint.

Before any weights are loaded, the adapter is checked against the base it is put on: every module
it adapts must exist in the base with the shapes the adapter's matrices expect
(:func:`check_adapter_fits`). A bad path, a checkpoint without adapter weights or an adapter for
another base is a :class:`~terminal_agent.errors.ConfigError` naming the path.

Evaluation reaches a local model through the model-client registry (the entry ``local``:
``ModelClientConfig(type="local", model=..., adapter=...)``, or a spec that is a model directory), whose
factory is :func:`build_local_model_client`. It samples through the trainer's own sampler (:func:`policy_eval_client`, which is
:func:`~terminal_agent.training.local.policy.make_policy_client` with the evaluation's settings): the
continuous-batching sampler, or the generic batched one for architectures the slot decoder does not run.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelClient
from terminal_agent.models.client_registry import ModelClientConfig, is_model_directory
from terminal_agent.training.local.checkpoints import ADAPTER_DIR, STATE_FILE, checkpoint_root, latest_checkpoint
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.policy import LocalPolicy, base_model_dir, load_policy, make_policy_client, resolve_device

logger = logging.getLogger(__name__)

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")
"""The weight files peft's ``save_pretrained`` writes (safetensors by default)."""
LOCAL_MODEL_SPEC = "embedded"
"""The one model spec that is not a directory and still names a local model."""


class LocalModelConfig(BaseModel):
    """A local model to evaluate or export: its base, an optional adapter, where and how it runs."""

    model_config = ConfigDict(extra="forbid")

    model: str = LOCAL_MODEL_SPEC
    """``embedded`` (the packaged SmolLM2-135M-Instruct) or a transformers model directory."""
    adapter: Path | None = None
    """A LoRA adapter of the local trainer: a checkpoint, its ``adapter/`` directory or a run directory
    (its latest checkpoint); ``None``: the base alone."""
    device: Literal["cpu", "cuda", "auto"] = "auto"
    """Where the model runs; ``auto`` picks CUDA when available."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """Weights' dtype while sampling."""
    num_threads: int | None = Field(default=None, ge=1)
    """torch CPU threads; ``None``: the sampler's default."""


def is_local_model(spec: str | None) -> bool:
    """Whether a ``--model`` spec names a base an adapter can go on: ``embedded`` or a model directory."""
    return spec == LOCAL_MODEL_SPEC or is_model_directory(spec)


def resolve_adapter_dir(path: str | Path) -> Path:
    """The peft adapter directory that ``path`` names (see the module docstring).

    Raises :class:`ConfigError` naming ``path`` when it does not exist, holds no adapter, or its
    adapter has no weight file or an unreadable or non-LoRA ``adapter_config.json``.
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"adapter {path} does not exist")
    if not path.is_dir():
        raise ConfigError(f"adapter {path} is not a directory (give a checkpoint, e.g. RUN/checkpoints/step_N)")
    if (path / ADAPTER_CONFIG).is_file():
        adapter = path
    elif (path / ADAPTER_DIR / ADAPTER_CONFIG).is_file():
        adapter = path / ADAPTER_DIR
    elif checkpoint_root(path).is_dir():
        latest = latest_checkpoint(path)
        if latest is None:
            raise ConfigError(f"adapter {path}: the run has no complete checkpoint in {checkpoint_root(path)}")
        return resolve_adapter_dir(latest)
    elif (path / ADAPTER_DIR).is_dir():
        raise ConfigError(f"adapter {path}: {path / ADAPTER_DIR} has no {ADAPTER_CONFIG}")
    elif (path / STATE_FILE).is_file():
        raise ConfigError(f"adapter {path} is a checkpoint without adapter weights (no {ADAPTER_DIR}/ beside {STATE_FILE})")
    else:
        raise ConfigError(
            f"adapter {path} holds no LoRA adapter (expected {ADAPTER_DIR}/{ADAPTER_CONFIG} of a trainer checkpoint, "
            f"{ADAPTER_CONFIG}, or a run directory with checkpoints/)"
        )
    if not any((adapter / name).is_file() for name in ADAPTER_WEIGHTS):
        raise ConfigError(f"adapter {path} has no adapter weights ({' or '.join(ADAPTER_WEIGHTS)} in {adapter})")
    settings = read_adapter_config(adapter)
    if settings.get("peft_type") != "LORA":
        raise ConfigError(f"adapter {path} is a {settings.get('peft_type')!r} adapter, not LoRA")
    return adapter


def read_adapter_config(adapter: Path) -> dict[str, Any]:
    """``adapter_config.json`` of an adapter directory (ConfigError naming the file when unreadable)."""
    file = Path(adapter) / ADAPTER_CONFIG
    try:
        settings = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {file}: {exc}") from None
    if not isinstance(settings, dict):
        raise ConfigError(f"{file} is not a JSON object")
    return settings


def adapter_tensor_shapes(adapter: Path) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor in the adapter's weight file (safetensors: read from its header)."""
    safetensors_file = Path(adapter) / ADAPTER_WEIGHTS[0]
    if safetensors_file.is_file():
        from safetensors import safe_open

        try:
            with safe_open(str(safetensors_file), "pt") as weights:
                return {key: tuple(weights.get_slice(key).get_shape()) for key in weights.keys()}
        except Exception as exc:  # noqa: BLE001 - safetensors raises its own untyped errors for a corrupt file
            raise ConfigError(f"cannot read adapter weights {safetensors_file}: {exc}") from None
    import torch

    bin_file = Path(adapter) / ADAPTER_WEIGHTS[1]
    try:
        state = torch.load(bin_file, weights_only=True, map_location="cpu")
    except Exception as exc:  # noqa: BLE001 - torch.load raises many kinds of error for a corrupt file
        raise ConfigError(f"cannot read adapter weights {bin_file}: {exc}") from None
    return {key: tuple(value.shape) for key, value in state.items()}


def _module_path(key: str) -> tuple[str, str]:
    """``base_model.model.X.lora_A.weight`` -> (``X``, ``lora_A``): the adapted module and the part."""
    name = key.removeprefix("base_model.model.")
    for part in ("lora_A", "lora_B", "lora_embedding_A", "lora_embedding_B", "lora_magnitude_vector"):
        marker = f".{part}"
        if marker in name:
            return name.split(marker)[0], part
    return name.rsplit(".", 1)[0], "other"


def check_adapter_fits(adapter: Path, base_dir: Path, *, shown_as: str | Path | None = None) -> None:
    """Raise :class:`ConfigError` (naming the adapter as ``shown_as``) unless every module the adapter
    adapts exists in the base model of ``base_dir`` with matching input and output sizes.

    The base is built on the meta device from its ``config.json``: no weights are read.
    A base whose directory name differs from the one recorded in ``adapter_config.json`` is only
    logged (a converted model's directory moves between machines; its shapes are what must match).
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    shown = shown_as or adapter
    settings = read_adapter_config(adapter)
    recorded = settings.get("base_model_name_or_path")
    if recorded and Path(str(recorded)).name != Path(base_dir).name:
        logger.warning("adapter %s was trained on %s; putting it on %s", shown, Path(str(recorded)).name, Path(base_dir).name)
    try:
        base_config = AutoConfig.from_pretrained(base_dir)
        with torch.device("meta"):
            skeleton = AutoModelForCausalLM.from_config(base_config)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot build the base model of {base_dir} to check adapter {shown}: {exc}") from None
    modules = dict(skeleton.named_modules())
    shapes = adapter_tensor_shapes(adapter)
    if not shapes:
        raise ConfigError(f"adapter {shown} has no tensors in its weight file")
    for key, shape in sorted(shapes.items()):
        module_name, part = _module_path(key)
        module = modules.get(module_name)
        if module is None:
            raise ConfigError(f"adapter {shown} is for another base model: {Path(base_dir).name} has no module {module_name!r}")
        in_features, out_features = getattr(module, "in_features", None), getattr(module, "out_features", None)
        if part == "lora_A" and in_features is not None and shape[-1] != in_features:
            raise ConfigError(f"adapter {shown} is for another base model: its {module_name} takes {shape[-1]} inputs, "
                              f"{Path(base_dir).name}'s takes {in_features}")
        if part == "lora_B" and out_features is not None and shape[0] != out_features:
            raise ConfigError(f"adapter {shown} is for another base model: its {module_name} gives {shape[0]} outputs, "
                              f"{Path(base_dir).name}'s gives {out_features}")


def prepare_local_model(config: LocalModelConfig) -> tuple[Path, Path | None]:
    """The base's directory and the adapter's directory (or None), both checked; nothing is loaded.

    Raises :class:`ConfigError` for a model that is neither ``embedded`` nor a transformers directory
    and for every adapter problem :func:`resolve_adapter_dir` and :func:`check_adapter_fits` find.
    """
    base_dir = base_model_dir(config.model)
    if config.adapter is None:
        return base_dir, None
    adapter = resolve_adapter_dir(config.adapter)
    check_adapter_fits(adapter, base_dir, shown_as=config.adapter)
    return base_dir, adapter


def training_config_for(config: LocalModelConfig, *, max_new_tokens: int, slots: int) -> LocalTrainingConfig:
    """The trainer's config that loads and samples ``config`` the way the trainer would."""
    return LocalTrainingConfig(
        model_path=config.model, device=config.device, dtype=config.dtype, num_threads=config.num_threads,
        max_response_length_per_turn=max_new_tokens, concurrency=max(1, slots),
    )


def load_local_model(config: LocalModelConfig) -> LocalPolicy:
    """The base model, with the adapter when ``config`` names one (loaded as the trainer loads a
    saved adapter), in eval mode. Raises :class:`ConfigError` as :func:`prepare_local_model` does."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base_dir, adapter = prepare_local_model(config)
    training_config = training_config_for(config, max_new_tokens=1, slots=1)
    if adapter is not None:
        policy = load_policy(training_config, adapter_dir=adapter)
    else:
        if config.num_threads:
            torch.set_num_threads(config.num_threads)
        device = resolve_device(config.device)
        model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=getattr(torch, config.dtype)).to(device)
        policy = LocalPolicy(model=model, tokenizer=AutoTokenizer.from_pretrained(base_dir), device=device)
    policy.model.eval()
    return policy


def describe_local_model(config: LocalModelConfig) -> str:
    """The name a run's results give the model: the base, and the adapter as given."""
    if config.model == LOCAL_MODEL_SPEC:
        from terminal_agent.models.embedded import EMBEDDED_MODEL_NAME

        base = f"embedded/{EMBEDDED_MODEL_NAME}"
    else:
        base = f"local/{Path(config.model).name}"
    return base if config.adapter is None else f"{base} + adapter {config.adapter}"


def policy_eval_client(policy: LocalPolicy, config: LocalTrainingConfig, *, concurrency: int, name: str,
                       top_p: float = 1.0) -> ModelClient:
    """The trainer's sampler (:func:`make_policy_client`) on ``policy`` with the evaluation's slots and
    nucleus mass; a call's ``temperature`` and ``max_tokens`` (the runner passes them) override its defaults.

    Build it while the adapter is in the state to evaluate (enabled, disabled, loaded): the
    continuous sampler's fused projections read that state when it is built. Close it when done.
    """
    client = make_policy_client(policy, config.model_copy(update={"concurrency": max(1, concurrency), "top_p": top_p}))
    client.name = name
    return client


def local_model_client(config: LocalModelConfig, *, max_new_tokens: int, concurrency: int) -> ModelClient:
    """A thread-safe client sampling the local model of ``config`` through the trainer's sampler."""
    policy = load_local_model(config)
    training_config = training_config_for(config, max_new_tokens=max_new_tokens, slots=concurrency)
    return policy_eval_client(policy, training_config, concurrency=concurrency, name=describe_local_model(config))


DEFAULT_LOCAL_MAX_TOKENS = 256
"""Reply cap of a local model without ``max_tokens`` (the embedded client's default)."""


def build_local_model_client(config: ModelClientConfig) -> ModelClient:
    """The model-client registry's ``local`` entry: :func:`local_model_client` for the base ``config.model``
    (``None``: ``embedded``) with ``config.adapter``, on ``config.device`` in ``config.dtype``, decoding
    ``config.slots`` episodes together. Raises :class:`ConfigError` as :func:`prepare_local_model` does."""
    local = LocalModelConfig(model=config.model or LOCAL_MODEL_SPEC, adapter=config.adapter,
                             device=config.device or "auto", dtype=config.dtype or "float32")
    return local_model_client(local, max_new_tokens=config.max_tokens or DEFAULT_LOCAL_MAX_TOKENS,
                              concurrency=config.slots or 1)


__all__ = [
    "DEFAULT_LOCAL_MAX_TOKENS",
    "build_local_model_client",
    "LocalModelConfig",
    "adapter_tensor_shapes",
    "check_adapter_fits",
    "describe_local_model",
    "is_local_model",
    "is_model_directory",
    "load_local_model",
    "local_model_client",
    "policy_eval_client",
    "prepare_local_model",
    "read_adapter_config",
    "resolve_adapter_dir",
]
