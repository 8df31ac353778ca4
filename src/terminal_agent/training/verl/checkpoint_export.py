"""A verl FSDP checkpoint as a plain transformers model directory (LoRA fused into the base).

verl's FSDP checkpoint manager writes, per actor checkpoint (``<default_local_dir>/global_step_N/actor``):
``model_world_size_W_rank_R.pt`` (each rank's shard of ``model.state_dict()``: DTensors under FSDP2,
ShardedTensors or DTensors under FSDP1), optimizer and extra-state shards, ``fsdp_config.json``
(``FSDP_version``, ``world_size``), ``huggingface/`` (the config and tokenizer, no weights) and, for a
LoRA run, ``lora_train_meta.json`` (``r``, ``lora_alpha``). verl's own merger writes a LoRA run's base
weights unchanged and the adapter beside them; here the adapter is fused, ``W + (alpha / r) * B @ A`` for
each adapted projection, so what comes out is the policy that was trained, in the layout
``AutoModelForCausalLM.from_pretrained`` and vLLM read.

:func:`find_verl_actor_dir` accepts the run's checkpoint root (its ``latest_checkpointed_iteration.txt``
names the step), a ``global_step_N`` folder or the ``actor`` folder itself.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from terminal_agent.errors import ConfigError
from terminal_agent.training.verl.rllm_chat_parser import original_chat_template

logger = logging.getLogger(__name__)

LATEST_FILE = "latest_checkpointed_iteration.txt"
FSDP_CONFIG = "fsdp_config.json"
LORA_META = "lora_train_meta.json"
EXPORT_RECORD = "terminal_agent_export.json"
_SHARD = re.compile(r"model_world_size_(\d+)_rank_(\d+)\.pt$")
_WRAPPER_PARTS = ("_fsdp_wrapped_module.", "_checkpoint_wrapped_module.", "_orig_mod.")


@dataclass
class VerlExportResult:
    """What :func:`export_verl_checkpoint` wrote."""

    out_dir: Path
    actor_dir: Path
    """The verl actor checkpoint that was read."""
    world_size: int
    lora_layers_fused: int
    """Adapted projections whose LoRA update was fused into the base weight (0: full fine-tuning)."""
    parameters: int


def is_verl_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is (or holds) a verl FSDP actor checkpoint."""
    try:
        find_verl_actor_dir(path)
    except ConfigError:
        return False
    return True


def find_verl_actor_dir(path: str | Path) -> Path:
    """The ``actor`` folder of a verl checkpoint given as the checkpoint root, a step or the actor folder."""
    path = Path(path)
    if (path / LATEST_FILE).is_file():
        step = (path / LATEST_FILE).read_text().strip()
        path = path / f"global_step_{step}"
    if (path / "actor" / FSDP_CONFIG).is_file():
        path = path / "actor"
    if not (path / FSDP_CONFIG).is_file():
        raise ConfigError(f"{path} is no verl FSDP checkpoint (no {FSDP_CONFIG}; expected a checkpoint root with "
                          f"{LATEST_FILE}, a global_step_N folder or its actor folder)")
    return path


def _full_tensor(pieces: list[Any]) -> Any:
    """One parameter from the ranks' pieces, in rank order: DTensor / ShardedTensor shards or plain tensors."""
    import torch

    first = pieces[0]
    placements = getattr(first, "placements", None)
    if placements is not None:  # DTensor: verl's FSDP2 (and FSDP1 with use_dtensor)
        locals_ = [piece.to_local() for piece in pieces]
        shard_dims: list[int] = [p.dim for p in placements if type(p).__name__ == "Shard"]
        if not shard_dims:
            return locals_[0]
        return torch.cat(locals_, dim=shard_dims[0])[: first.shape[shard_dims[0]]] if len(locals_) > 1 else locals_[0]
    if hasattr(first, "local_shards"):  # ShardedTensor: place each rank's shard at its offsets
        full = torch.empty(first.size(), dtype=first.local_shards()[0].tensor.dtype)
        for piece in pieces:
            for shard in piece.local_shards():
                index = tuple(slice(offset, offset + size) for offset, size in
                              zip(shard.metadata.shard_offsets, shard.metadata.shard_sizes))
                full[index] = shard.tensor
        return full
    return first


def _clean_key(key: str) -> str:
    for part in _WRAPPER_PARTS:
        key = key.replace(part, "")
    return key.removeprefix("base_model.model.")


def load_full_state_dict(actor_dir: Path) -> tuple[dict[str, Any], int]:
    """Every rank's shard joined into full tensors (keys without FSDP/peft wrappers); the world size."""
    import torch

    fsdp = json.loads((actor_dir / FSDP_CONFIG).read_text())
    world = int(fsdp.get("world_size", 1))
    shards = {}
    for file in actor_dir.iterdir():
        match = _SHARD.match(file.name)
        if match and int(match.group(1)) == world:
            shards[int(match.group(2))] = file
    missing = sorted(set(range(world)) - set(shards))
    if missing:
        raise ConfigError(f"{actor_dir}: model shards of rank(s) {missing} of {world} are missing")
    states = [torch.load(shards[rank], map_location="cpu", weights_only=False) for rank in range(world)]
    full = {}
    for key in states[0]:
        full[_clean_key(key)] = _full_tensor([state[key] for state in states]).detach().clone()
    return full, world


def fuse_lora(state: dict[str, Any], scaling: float | None) -> tuple[dict[str, Any], int]:
    """``W + scaling * B @ A`` for each ``X.base_layer.weight`` with ``X.lora_A/B.*.weight``; adapter keys dropped."""
    fused, count = {}, 0
    for key, value in state.items():
        if ".lora_" in key:
            continue
        if key.endswith(".base_layer.weight"):
            stem = key.removesuffix(".base_layer.weight")
            a_keys = [k for k in state if k.startswith(f"{stem}.lora_A.") and k.endswith(".weight")]
            b_keys = [k for k in state if k.startswith(f"{stem}.lora_B.") and k.endswith(".weight")]
            if a_keys and b_keys:
                if scaling is None:
                    raise ConfigError(f"LoRA weights for {stem} but no {LORA_META} (rank and alpha) in the checkpoint")
                a, b = state[a_keys[0]].float(), state[b_keys[0]].float()
                value = (value.float() + scaling * (b @ a)).to(value.dtype)
                count += 1
            fused[f"{stem}.weight"] = value
            continue
        fused[key.replace(".base_layer.", ".")] = value
    return fused, count


def export_verl_checkpoint(
    checkpoint: str | Path,
    out_dir: str | Path,
    *,
    dtype: Literal["float32", "bfloat16", "float16"] = "bfloat16",
    force: bool = False,
) -> VerlExportResult:
    """Write the verl checkpoint at ``checkpoint`` as a transformers directory ``out_dir`` (atomically)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    actor_dir = find_verl_actor_dir(checkpoint)
    out_dir = Path(out_dir)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise ConfigError(f"output directory {out_dir} is not empty (pass --force to replace it)")
    hf_dir = actor_dir / "huggingface"
    if not (hf_dir / "config.json").is_file():
        raise ConfigError(f"{actor_dir}: no huggingface/config.json (verl writes the model config there)")
    state, world = load_full_state_dict(actor_dir)
    scaling = None
    if (actor_dir / LORA_META).is_file():
        meta = json.loads((actor_dir / LORA_META).read_text())
        scaling = float(meta["lora_alpha"]) / float(meta["r"])
    state, fused = fuse_lora(state, scaling)
    torch_dtype = getattr(torch, dtype)
    config = AutoConfig.from_pretrained(hf_dir)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    result = model.load_state_dict({k: v.to(torch_dtype) for k, v in state.items()}, strict=False, assign=True)
    missing = [k for k in result.missing_keys if not (k == "lm_head.weight" and config.tie_word_embeddings)]
    if missing or result.unexpected_keys:
        raise ConfigError(f"{actor_dir}: the shards do not match the model config (missing {missing[:5]}, "
                          f"unexpected {result.unexpected_keys[:5]})")
    if config.tie_word_embeddings:
        model.tie_weights()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        model.save_pretrained(staging)
        try:
            tokenizer = AutoTokenizer.from_pretrained(hf_dir)
            # a run whose model folder was prepared for rLLM's parser saved the wrapped template: give the model's own
            tokenizer.chat_template = original_chat_template(tokenizer.chat_template)
            tokenizer.save_pretrained(staging)
        except (OSError, ValueError) as exc:  # a checkpoint saved without its tokenizer: the weights still count
            logger.warning("%s: no tokenizer copied (%s)", hf_dir, exc)
        for extra in ("generation_config.json", "chat_template.jinja"):
            if (hf_dir / extra).is_file() and not (staging / extra).is_file():
                shutil.copy2(hf_dir / extra, staging / extra)
        parameters = sum(p.numel() for p in model.parameters())
        (staging / EXPORT_RECORD).write_text(json.dumps({
            "source": "verl", "actor_dir": str(actor_dir), "world_size": world, "lora_layers_fused": fused,
            "lora_scaling": scaling, "dtype": dtype, "parameters": parameters}, indent=1) + "\n")
        staging.chmod(0o755)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return VerlExportResult(out_dir=out_dir, actor_dir=actor_dir, world_size=world, lora_layers_fused=fused,
                            parameters=parameters)


__all__ = ["VerlExportResult", "export_verl_checkpoint", "find_verl_actor_dir", "fuse_lora", "is_verl_checkpoint",
           "load_full_state_dict"]
