"""A loaded local model sampled by the project's own samplers: the local trainer's policy while it trains, and
a base with a trained adapter when it is evaluated (:func:`local_model_client`, what the model-client registry's
entry ``local`` builds).

:func:`local_sampler_client` picks the sampler as ``local.sampler`` says:

- ``auto``: the continuous-batching sampler, or the generic batched sampler for an architecture the slot decoder
  does not run;
- ``continuous`` / ``batched``: that sampler only (``continuous`` on an unsupported architecture is a
  :class:`ConfigError`);
- ``vllm``: :class:`~terminal_agent.models.vllm_sampler.VLLMSamplerClient`, vLLM's offline engine on the model's
  GPU loading the base weights from the model directory; the model's LoRA adapter is carried over whenever it
  changed (needs CUDA and vLLM; a :class:`ConfigError` names the key otherwise).

The samplers never copy weights: they run the model itself. The local trainer's optimizer updates the LoRA
parameters in place; the continuous sampler re-reads them (its fused copies are refreshed in place, so its CUDA
graphs stay valid) whenever it starts decoding after an update.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelClient
from terminal_agent.models.adapter_loading import (
    LocalModel,
    LocalModelConfig,
    base_model_dir,
    describe_local_model,
    load_local_model,
)

logger = logging.getLogger(__name__)

SamplerKind = Literal["auto", "continuous", "batched", "vllm"]

DEFAULT_LOCAL_MAX_TOKENS = 256
"""Reply cap of a local model without ``max_tokens`` (the embedded client's default)."""


def local_sampler_client(local: LocalModel, *, sampler: SamplerKind, model_path: str, slots: int,
                         max_new_tokens: int, temperature: float, top_p: float, num_threads: int | None,
                         seed: int, name: str) -> ModelClient:
    """A thread-safe client sampling ``local.model`` with the sampler ``sampler`` picks (module docstring),
    decoding ``slots`` calls together; a call's ``temperature`` / ``top_p`` / ``max_tokens`` override these.
    ``model_path`` (``embedded`` or a directory) is where vLLM loads the base weights from; ``seed`` seeds vLLM."""
    from terminal_agent.models.batched_generation import BatchedEmbeddedClient, BatchedGenerationConfig
    from terminal_agent.models.continuous_batching import ContinuousBatchingClient, ContinuousBatchingConfig
    from terminal_agent.models.decoder_stack import UnsupportedModelError

    slots = max(1, slots)
    sampling = {"max_new_tokens": max_new_tokens, "temperature": temperature, "top_p": top_p,
                "max_batch_size": slots, "num_threads": num_threads}
    if sampler == "vllm":
        return _vllm_client(local, model_path, sampling, seed=seed, name=name)
    if sampler in ("auto", "continuous"):
        try:
            return ContinuousBatchingClient(local.model, local.tokenizer, ContinuousBatchingConfig(**sampling), name=name)
        except UnsupportedModelError as exc:
            if sampler == "continuous":
                raise ConfigError(f"local.sampler: the continuous sampler cannot run this model ({exc}); "
                                  "use local.sampler=auto or batched") from None
            logger.info("%s sampled by the generic batched sampler: %s", name, exc)
    return BatchedEmbeddedClient(local.model, local.tokenizer, BatchedGenerationConfig(**sampling), name=name)


def _vllm_client(local: LocalModel, model_path: str, sampling: dict[str, Any], *, seed: int, name: str) -> ModelClient:
    from terminal_agent.models.vllm_sampler import VLLMSamplerClient, VLLMSamplerConfig, require_vllm

    require_vllm("local.sampler")
    if getattr(local.device, "type", str(local.device)) != "cuda":
        raise ConfigError(f"local.sampler: vllm samples on a CUDA GPU, but the policy is on {local.device} "
                          "(local.device); on CPU the project's sampler runs (local.sampler=auto)")
    settings = {key: value for key, value in sampling.items() if key != "num_threads"}
    return VLLMSamplerClient(local.model, local.tokenizer, base_model_dir(model_path),
                             VLLMSamplerConfig(**settings, seed=seed), name=name)


def local_model_client(config: LocalModelConfig, *, max_new_tokens: int, concurrency: int) -> ModelClient:
    """A thread-safe client sampling the local model of ``config`` (:func:`load_local_model`) as the local
    trainer samples its policy (``local.sampler=auto``, temperature and nucleus mass 1 unless a call says)."""
    local = load_local_model(config)
    return local_sampler_client(local, sampler="auto", model_path=config.model, slots=concurrency,
                                max_new_tokens=max_new_tokens, temperature=1.0, top_p=1.0,
                                num_threads=config.num_threads, seed=0, name=describe_local_model(config))


__all__ = ["DEFAULT_LOCAL_MAX_TOKENS", "SamplerKind", "local_model_client", "local_sampler_client"]
