"""Local models to evaluate or export: a base (``embedded`` or a transformers directory) with an optional LoRA
adapter trained by the local trainer, named, checked against the base, then loaded.

An adapter is named by any of:

* a checkpoint of a run, ``RUN/checkpoints/step_N`` (or the run's ``warm_start``): its ``adapter/``;
* that ``adapter/`` directory itself (``adapter_config.json`` and ``adapter_model.safetensors``);
* a run directory (holding ``checkpoints/``): its latest checkpoint.

The checkpoint layout is read here and written by :mod:`terminal_agent.training.local.checkpoints`, which takes
its names from this module: the trainer sits above the model clients, and evaluation reaches a trained adapter
without importing the trainer.

Before any weights are loaded, the adapter is checked against the base it is put on: every module it adapts must
exist in the base with the shapes the adapter's matrices expect (:func:`check_adapter_fits`). A bad path, a
checkpoint without adapter weights or an adapter for another base is a :class:`~terminal_agent.errors.ConfigError`
naming the path. :mod:`terminal_agent.models.local_model_sampling` samples what :func:`load_local_model` loads.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import ConfigError

logger = logging.getLogger(__name__)

# --- the local trainer's checkpoint layout (written by training.local.checkpoints) ---------------
CHECKPOINTS_DIR = "checkpoints"
"""A run's checkpoints: ``RUN/checkpoints/step_NNNNNN``."""
STATE_FILE = "trainer_state.pt"
"""A checkpoint's optimizer, step, data order and RNG states; a checkpoint is complete when it is there."""
ADAPTER_DIR = "adapter"
"""A checkpoint's LoRA weights (peft ``save_pretrained``)."""
LATEST_FILE = "latest"
"""``RUN/checkpoints/latest`` names the newest complete checkpoint."""

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")
"""The weight files peft's ``save_pretrained`` writes (safetensors by default)."""
LOCAL_MODEL_SPEC = "embedded"
"""The one model spec that is not a directory and still names a local model (the packaged SmolLM2)."""


def checkpoint_root(run_dir: Path) -> Path:
    """Where a run keeps its checkpoints."""
    return Path(run_dir) / CHECKPOINTS_DIR


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest complete checkpoint of ``run_dir`` (None when there is none)."""
    root = checkpoint_root(run_dir)
    pointer = root / LATEST_FILE
    if pointer.is_file():
        candidate = root / pointer.read_text().strip()
        if (candidate / STATE_FILE).is_file():
            return candidate
    done = sorted(p for p in root.glob("step_*") if (p / STATE_FILE).is_file()) if root.is_dir() else []
    return done[-1] if done else None


# --- the base ---------------------------------------------------------------------------------
def base_model_dir(model_path: str) -> Path:
    """The transformers directory of ``model_path`` (``embedded``: the cached SmolLM2 conversion)."""
    if model_path == LOCAL_MODEL_SPEC:
        from terminal_agent.models.embedded import ensure_embedded_model_cached

        return ensure_embedded_model_cached()
    path = Path(model_path)
    if not (path / "config.json").is_file():
        raise ConfigError(f"model.path {model_path!r} is neither 'embedded' nor a transformers directory (no config.json)")
    return path


def resolve_device(name: str) -> Any:
    """The torch device ``auto`` / ``cpu`` / ``cuda`` stands for (``auto``: CUDA when torch sees one)."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("local.device is 'cuda' but torch sees no CUDA device")
    return torch.device(name)


def is_model_directory(spec: str | None) -> bool:
    """Whether a model spec is a transformers model directory (one with ``config.json``)."""
    return bool(spec) and (Path(str(spec)) / "config.json").is_file()


def is_local_model(spec: str | None) -> bool:
    """Whether a ``--model`` spec names a base an adapter can go on: ``embedded`` or a model directory."""
    return spec == LOCAL_MODEL_SPEC or is_model_directory(spec)


# --- the adapter ------------------------------------------------------------------------------
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
            f"{ADAPTER_CONFIG}, or a run directory with {CHECKPOINTS_DIR}/)"
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


# --- the model ----------------------------------------------------------------------------------
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


@dataclass
class LocalModel:
    """A loaded causal LM (a peft model when it carries an adapter), its tokenizer and device; the local
    trainer's policy is one too."""

    model: Any
    tokenizer: Any
    device: Any


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


def load_local_model(config: LocalModelConfig) -> LocalModel:
    """The base model, with the adapter when ``config`` names one (peft's ``PeftModel.from_pretrained``), in
    eval mode. Raises :class:`ConfigError` as :func:`prepare_local_model` does."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base_dir, adapter = prepare_local_model(config)
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    device = resolve_device(config.device)
    model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=getattr(torch, config.dtype)).to(device)
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter)).to(device)
    model.eval()
    return LocalModel(model=model, tokenizer=AutoTokenizer.from_pretrained(base_dir), device=device)


def describe_local_model(config: LocalModelConfig) -> str:
    """The name a run's results give the model: the base, and the adapter as given."""
    if config.model == LOCAL_MODEL_SPEC:
        from terminal_agent.models.embedded import EMBEDDED_MODEL_NAME

        base = f"embedded/{EMBEDDED_MODEL_NAME}"
    else:
        base = f"local/{Path(config.model).name}"
    return base if config.adapter is None else f"{base} + adapter {config.adapter}"


__all__ = [
    "ADAPTER_CONFIG",
    "ADAPTER_DIR",
    "ADAPTER_WEIGHTS",
    "CHECKPOINTS_DIR",
    "LATEST_FILE",
    "LOCAL_MODEL_SPEC",
    "STATE_FILE",
    "LocalModel",
    "LocalModelConfig",
    "adapter_tensor_shapes",
    "base_model_dir",
    "check_adapter_fits",
    "checkpoint_root",
    "describe_local_model",
    "is_local_model",
    "is_model_directory",
    "latest_checkpoint",
    "load_local_model",
    "prepare_local_model",
    "read_adapter_config",
    "resolve_adapter_dir",
    "resolve_device",
]
