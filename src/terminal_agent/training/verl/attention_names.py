"""The names of the project's packed attention: what a preset, verl's worker config and transformers call it.

Torch-free and import-free, so that the overrides, the machine checks and the attention module itself read them
from one place without importing one another.
"""

from __future__ import annotations

from typing import Final

#: The ``attn_implementation`` name of the project's packed attention (torch's varlen kernels, no extra package).
PACKED_ATTENTION_NAME: Final = "terminal_agent_varlen"
#: The module that registers it; verl imports it in every worker (``actor_rollout_ref.model.external_lib``).
PACKED_ATTENTION_MODULE: Final = "terminal_agent.training.verl.packed_attention"

__all__ = ["PACKED_ATTENTION_MODULE", "PACKED_ATTENTION_NAME"]
