"""Model clients behind :class:`terminal_agent.interfaces.ModelClient`.

``litellm_client`` (any provider / OpenAI-compatible endpoint), ``embedded`` (SmolLM2 in-process,
imported lazily because it pulls in torch), ``scripted`` (deterministic replies for tests) and
``factory.build_model_client`` to pick one.
"""

from terminal_agent.models.factory import ModelClientConfig, build_model_client, config_from_spec

__all__ = ["ModelClientConfig", "build_model_client", "config_from_spec"]
