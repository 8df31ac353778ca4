"""Model clients behind :class:`terminal_agent.interfaces.ModelClient`.

``litellm_client`` (any provider / OpenAI-compatible endpoint), ``embedded`` (SmolLM2 in-process,
imported lazily because it pulls in torch), ``batched_generation`` and ``continuous_batching`` (the
embedded model serving concurrent calls), ``adapter_loading`` (a local base with a LoRA adapter of the local
trainer: found, checked, loaded) and ``local_model_sampling`` (the sampler that runs it, the trainer's too),
``scripted`` (deterministic replies for tests),
``client_registry.MODEL_CLIENTS`` (spec kind -> factory; ``register_model_client`` adds a kind) and
``factory.build_model_client`` to pick one.
"""

from terminal_agent.models.client_registry import MODEL_CLIENTS, register_model_client
from terminal_agent.models.factory import ModelClientConfig, build_model_client, config_from_spec

__all__ = ["MODEL_CLIENTS", "ModelClientConfig", "build_model_client", "config_from_spec", "register_model_client"]
