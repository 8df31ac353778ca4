"""The policy of the local trainer: the base model with LoRA adapters (peft), and its sampling client.

The same in-memory model is sampled (through the batched client, in eval mode, no gradients) and
trained (through :mod:`terminal_agent.training.local.update`), so every rollout uses the current
weights and no copy or sync is needed. With the adapter disabled the same object is the frozen
reference of the optional KL term. ``local.sampler=vllm`` samples through vLLM instead, which gets the
adapter after every update (:func:`make_policy_client`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terminal_agent.interfaces import ModelClient
from terminal_agent.training.local.config import LocalTrainingConfig

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
    """A thread-safe client sampling ``policy``, as ``config.sampler`` (``local.sampler``) picks it:

    - ``auto``: the continuous-batching sampler, or the generic batched sampler for an architecture the
      slot decoder does not run;
    - ``continuous`` / ``batched``: that sampler only (``continuous`` on an unsupported architecture is a
      :class:`ConfigError`);
    - ``vllm``: :class:`~terminal_agent.models.vllm_sampler.VLLMSamplerClient`, vLLM's offline engine on
      the policy's GPU loading the base weights from the model directory; the policy's LoRA adapter is
      carried over whenever it changed (needs CUDA and vLLM; a :class:`ConfigError` names the key otherwise).

    The project's samplers never copy weights: they run ``policy.model`` itself. The optimizer updates the
    LoRA parameters in place; the continuous sampler re-reads them (its fused copies are refreshed in
    place, so its CUDA graphs stay valid) whenever it starts decoding after an update.
    """
    from terminal_agent.errors import ConfigError
    from terminal_agent.models.batched_generation import BatchedEmbeddedClient, BatchedGenerationConfig
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig
    from terminal_agent.models.decoder_stack import UnsupportedModelError

    slots = max(1, config.episodes_at_once)
    sampling = {"max_new_tokens": config.max_response_length_per_turn, "temperature": config.temperature,
                "top_p": config.top_p, "max_batch_size": slots, "num_threads": config.num_threads}
    if config.sampler == "vllm":
        return _vllm_policy_client(policy, config, sampling)
    if config.sampler in ("auto", "continuous"):
        try:
            return ContinuousBatchingClient(policy.model, policy.tokenizer, ContinuousBatchingConfig(**sampling),
                                            name="local-policy")
        except UnsupportedModelError as exc:
            if config.sampler == "continuous":
                raise ConfigError(f"local.sampler: the continuous sampler cannot run this model ({exc}); "
                                  "use local.sampler=auto or batched") from None
            logger.info("policy sampled by the generic batched sampler: %s", exc)
    return BatchedEmbeddedClient(policy.model, policy.tokenizer, BatchedGenerationConfig(**sampling), name="local-policy")


def _vllm_policy_client(policy: LocalPolicy, config: LocalTrainingConfig, sampling: dict[str, Any]) -> ModelClient:
    from terminal_agent.errors import ConfigError
    from terminal_agent.models.vllm_sampler import VLLMSamplerClient, VLLMSamplerConfig, require_vllm

    require_vllm("local.sampler")
    if getattr(policy.device, "type", str(policy.device)) != "cuda":
        raise ConfigError(f"local.sampler: vllm samples on a CUDA GPU, but the policy is on {policy.device} "
                          "(local.device); on CPU the project's sampler runs (local.sampler=auto)")
    settings = {key: value for key, value in sampling.items() if key != "num_threads"}
    return VLLMSamplerClient(policy.model, policy.tokenizer, base_model_dir(config.model_path),
                             VLLMSamplerConfig(**settings, seed=config.seed), name="local-policy")


__all__ = ["LocalPolicy", "base_model_dir", "load_policy", "make_policy_client", "resolve_device"]
