"""Export a trained checkpoint as a plain transformers model directory: the LoRA adapter merged into
the base weights (``W + scaling * B @ A`` per adapted projection), nothing of peft left.

The directory has what ``AutoModelForCausalLM.from_pretrained`` and vLLM read: ``config.json``,
``model.safetensors`` (sharded with an index for large models), the tokenizer files with the chat
template, and ``generation_config.json``; plus ``terminal_agent_export.json``, which records the base
and the adapter it came from. It is written to a temporary directory beside the target and renamed
into place, so a reader never sees half an export.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from terminal_agent.errors import ConfigError
from terminal_agent.models.adapter_loading import LocalModelConfig, load_local_model, prepare_local_model, read_adapter_config

logger = logging.getLogger(__name__)

EXPORT_RECORD = "terminal_agent_export.json"


@dataclass
class ExportResult:
    """What :func:`export_merged_model` wrote."""

    out_dir: Path
    base_dir: Path
    """The base model the adapter was merged into."""
    adapter_dir: Path
    """The adapter directory that was merged."""
    files: list[str]
    """File names in ``out_dir``."""
    parameters: int
    """Parameters of the merged model."""


def _inside(path: Path, directory: Path) -> bool:
    path, directory = path.resolve(), directory.resolve()
    return path == directory or directory in path.parents


def _default_permissions(directory: Path) -> None:
    """0755 / 0644: the temporary directory is 0700 and transformers writes the weights 0600, which a
    server running as another user could not read."""
    directory.chmod(0o755)
    for file in directory.iterdir():
        file.chmod(0o644)


def stored_dtype(base_dir: Path) -> Literal["float32", "bfloat16", "float16"]:
    """The dtype a transformers directory's ``config.json`` records (``dtype``, or the older ``torch_dtype``);
    float32 when it records none of the three."""
    settings = json.loads((Path(base_dir) / "config.json").read_text())
    stored = settings.get("dtype") or settings.get("torch_dtype")
    return stored if stored in ("float32", "bfloat16", "float16") else "float32"


def export_merged_model(
    checkpoint: str | Path,
    out_dir: str | Path,
    *,
    model: str = "embedded",
    dtype: Literal["float32", "bfloat16", "float16"] | None = None,
    force: bool = False,
) -> ExportResult:
    """Merge the adapter of ``checkpoint`` (a checkpoint, its ``adapter/`` or a run directory) into
    ``model`` (``embedded`` or a transformers directory) and write the result to ``out_dir``.

    ``dtype``: the saved weights' dtype (``None``: the base's own, from its ``config.json``); the
    merge runs in it. Raises :class:`ConfigError` for every bad checkpoint :func:`load_local_model`
    finds, for a non-empty ``out_dir`` without ``force``, and for an ``out_dir`` that holds the
    checkpoint or the base model (``force`` would delete them).
    """
    import torch

    out_dir = Path(out_dir)
    config = LocalModelConfig(model=model, adapter=Path(checkpoint), device="cpu", dtype=dtype or "float32")
    base_dir, adapter_dir = prepare_local_model(config)
    assert adapter_dir is not None
    for source, what in ((Path(checkpoint), "the checkpoint"), (base_dir, "the base model")):
        if _inside(source, out_dir):
            raise ConfigError(f"output directory {out_dir} holds {what} ({source}); export somewhere else")
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"output {out_dir} exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise ConfigError(f"output directory {out_dir} is not empty (pass --force to replace it)")
    if dtype is None:
        config = config.model_copy(update={"dtype": stored_dtype(base_dir)})

    policy = load_local_model(config)
    merged = policy.model.merge_and_unload()
    merged.eval()
    if getattr(merged, "hf_quantizer", None) is not None:  # a base loaded from GGUF must not be saved as quantized
        merged.hf_quantizer = None
    if hasattr(merged.config, "quantization_config"):
        del merged.config.quantization_config

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        with torch.no_grad():
            merged.save_pretrained(staging, safe_serialization=True)
        policy.tokenizer.save_pretrained(staging)
        adapter_settings = read_adapter_config(adapter_dir)
        (staging / EXPORT_RECORD).write_text(json.dumps({
            "base_model": model,
            "adapter": str(adapter_dir),
            "lora": {key: adapter_settings.get(key) for key in ("r", "lora_alpha", "target_modules", "use_rslora")},
            "dtype": config.dtype,
        }, indent=2, default=str) + "\n")
        _default_permissions(staging)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    files = sorted(p.name for p in out_dir.iterdir())
    parameters = sum(p.numel() for p in merged.parameters())
    logger.info("exported %s + %s to %s (%d parameters)", base_dir.name, adapter_dir, out_dir, parameters)
    return ExportResult(out_dir=out_dir, base_dir=base_dir, adapter_dir=adapter_dir, files=files, parameters=parameters)


__all__ = ["EXPORT_RECORD", "ExportResult", "export_merged_model", "stored_dtype"]
