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
from typing import Any

from terminal_agent.interfaces import ModelClient
from terminal_agent.models.adapter_loading import LocalModel, base_model_dir, resolve_device
from terminal_agent.models.local_model_sampling import local_sampler_client
from terminal_agent.training.local.config import LocalTrainingConfig

logger = logging.getLogger(__name__)

_DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}


@dataclass
class LocalPolicy(LocalModel):
    """A peft-wrapped causal LM, its tokenizer and device."""

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


def load_policy(config: LocalTrainingConfig) -> LocalPolicy:
    """Load the base model fresh (never the shared cached instance: it is about to be trained) and add a fresh
    LoRA adapter (a trained one is loaded by :func:`~terminal_agent.models.adapter_loading.load_local_model`, or
    into this policy by ``checkpoints.load_adapter_weights``)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    device = resolve_device(config.device)
    directory = base_model_dir(config.model_path)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    base = AutoModelForCausalLM.from_pretrained(directory, dtype=getattr(torch, _DTYPES[config.dtype]))
    base.to(device)
    torch.manual_seed(config.seed)  # LoRA's A matrices are initialised from torch's RNG
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
    """A thread-safe client sampling ``policy`` with the sampler ``config.sampler`` (``local.sampler``) picks:
    :func:`~terminal_agent.models.local_model_sampling.local_sampler_client`, the same that evaluates a trained
    adapter, decoding ``config.episodes_at_once`` episodes together."""
    return local_sampler_client(
        policy, sampler=config.sampler, model_path=config.model_path, slots=config.episodes_at_once,
        max_new_tokens=config.max_tokens_per_turn, temperature=config.temperature, top_p=config.top_p,
        num_threads=config.num_threads, seed=config.seed, name="local-policy",
    )


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


__all__ = ["LocalPolicy", "base_model_dir", "load_policy", "make_policy_client", "policy_eval_client", "resolve_device"]
