"""Per-reply sampling settings of the in-process models, declared once.

The embedded model's config (:class:`~terminal_agent.models.embedded.EmbeddedModelConfig`) and the
local samplers' configs (batched, continuous, vLLM) all extend :class:`SamplingSettings`; a sampler
built from the embedded client carries these fields over by name (``CARRIED_FROM_EMBEDDED``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SamplingSettings(BaseModel):
    """How one reply is sampled; a call's keywords (``max_tokens``, ``temperature``...) override them."""

    model_config = ConfigDict(extra="forbid")

    max_new_tokens: int = Field(default=256, ge=1)
    """Cap on generated tokens per reply (``max_tokens`` in a call overrides it)."""
    temperature: float = Field(default=0.0, ge=0.0)
    """0 means greedy decoding; above 0 samples (a call's ``temperature`` overrides it)."""
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    """Nucleus sampling mass when sampling."""
    stop_after_action: bool = True
    """Stop a reply as soon as a tag opened in it is closed (``</bash>``): one action is what a turn executes."""
    action_tags: list[str] | None = None
    """Tag names that count for ``stop_after_action``; ``None`` means any tag."""
    num_threads: int | None = Field(default=None, ge=1)
    """torch intra-op threads while generating on CPU; ``None``: half the cores (at least 1).

    Measured on 2 busy cores: 1 thread gave 6 tokens/s, 2 threads 1.6 tokens/s (spin-waiting
    threads fight the containers and each other), so the default leaves cores to the sandboxes."""


__all__ = ["SamplingSettings"]
