"""The policy of the local trainer: the base model with LoRA adapters (peft), and its sampling client.

The same in-memory model is sampled (through the batched client, in eval mode, no gradients) and
trained (through :mod:`terminal_agent.training.local_update`), so every rollout uses the current
weights and no copy or sync is needed. With the adapter disabled the same object is the frozen
reference of the optional KL term.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terminal_agent.interfaces import ModelClient
from terminal_agent.training.local_config import LocalTrainingConfig

logger = logging.getLogger(__name__)

_DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}


@dataclass
class LocalPolicy:
    """A peft-wrapped causal LM, its tokenizer and device."""

    model: Any
    tokenizer: Any
    device: Any

    @property
    def pad_id(self) -> int:
        """The id that pads packed rows: the tokenizer's pad token, else its EOS token, else 0.

        A tokenizer converted from the GGUF by some transformers releases has no pad token (seen on the
        H200 node with transformers 5.17), so every caller takes the id from here rather than the tokenizer.
        """
        pad = self.tokenizer.pad_token_id
        if pad is not None:
            return int(pad)
        return int(self.tokenizer.eos_token_id or 0)

    def trainable_parameters(self) -> list[Any]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def adapter_state(self) -> dict[str, Any]:
        """The LoRA weights only (what a checkpoint stores), detached copies on the CPU."""
        from peft import get_peft_model_state_dict

        return {k: v.detach().cpu().clone() for k, v in get_peft_model_state_dict(self.model).items()}

    def load_adapter_state(self, state: dict[str, Any]) -> None:
        from peft import set_peft_model_state_dict

        result = set_peft_model_state_dict(self.model, state)
        unexpected = getattr(result, "unexpected_keys", None)
        if unexpected:
            raise ValueError(f"adapter checkpoint has keys this model lacks: {sorted(unexpected)[:5]}")


def resolve_device(name: str) -> Any:
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        from terminal_agent.errors import ConfigError

        raise ConfigError("local.device is 'cuda' but torch sees no CUDA device")
    return torch.device(name)


def base_model_dir(model_path: str) -> Path:
    """The transformers directory of ``model_path`` (``embedded``: the cached SmolLM2 conversion)."""
    if model_path == "embedded":
        from terminal_agent.models.embedded import ensure_embedded_model_cached

        return ensure_embedded_model_cached()
    path = Path(model_path)
    if not (path / "config.json").is_file():
        from terminal_agent.errors import ConfigError

        raise ConfigError(f"model.path {model_path!r} is neither 'embedded' nor a transformers directory (no config.json)")
    return path


def load_policy(config: LocalTrainingConfig, *, adapter_dir: Path | None = None) -> LocalPolicy:
    """Load the base model fresh (never the shared cached instance: it is about to be trained) and add LoRA.

    ``adapter_dir`` loads saved adapter weights (``save_pretrained`` of a trained run) instead of a fresh init.
    """
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    device = resolve_device(config.device)
    directory = base_model_dir(config.model_path)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    base = AutoModelForCausalLM.from_pretrained(directory, dtype=getattr(torch, _DTYPES[config.dtype]))
    base.to(device)
    torch.manual_seed(config.seed)  # LoRA's A matrices are initialised from torch's RNG
    if adapter_dir is not None:
        model = PeftModel.from_pretrained(base, str(adapter_dir), is_trainable=True)
    else:
        lora = LoraConfig(
            r=config.lora_rank,
            lora_alpha=config.lora_alpha,
            lora_dropout=config.lora_dropout,
            target_modules=list(config.lora_target_modules),
            task_type="CAUSAL_LM",
        )
        model = get_peft_model(base, lora)
    model.to(device)
    logger.info("policy %s on %s, %d trainable parameters", directory.name, device, sum(p.numel() for p in model.parameters() if p.requires_grad))
    return LocalPolicy(model=model, tokenizer=tokenizer, device=device)


def make_policy_client(policy: LocalPolicy, config: LocalTrainingConfig) -> ModelClient:
    """A thread-safe client sampling ``policy``: the continuous-batching sampler, or the generic batched
    sampler for an architecture the slot decoder does not run.

    Weights are never copied: both samplers run ``policy.model`` itself. The optimizer updates the
    LoRA parameters in place; the continuous sampler re-reads them (its fused copies are refreshed
    in place, so its CUDA graphs stay valid) whenever it starts decoding after an update.
    """
    from terminal_agent.models.batched_generation import BatchedEmbeddedClient, BatchedGenerationConfig
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig
    from terminal_agent.models.decoder_stack import UnsupportedModelError

    slots = max(1, config.episodes_at_once)
    try:
        return ContinuousBatchingClient(
            policy.model,
            policy.tokenizer,
            ContinuousBatchingConfig(
                max_new_tokens=config.max_response_length_per_turn,
                temperature=config.temperature,
                top_p=config.top_p,
                max_batch_size=slots,
                num_threads=config.num_threads,
            ),
            name="local-policy",
        )
    except UnsupportedModelError as exc:
        logger.info("policy sampled by the generic batched sampler: %s", exc)
    return BatchedEmbeddedClient(
        policy.model,
        policy.tokenizer,
        BatchedGenerationConfig(
            max_new_tokens=config.max_response_length_per_turn,
            temperature=config.temperature,
            top_p=config.top_p,
            max_batch_size=slots,
            num_threads=config.num_threads,
        ),
        name="local-policy",
    )


__all__ = ["LocalPolicy", "base_model_dir", "load_policy", "make_policy_client", "resolve_device"]
