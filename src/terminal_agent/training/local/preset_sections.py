"""The local backend's preset: the common sections (:class:`~terminal_agent.training.preset_config.TrainingPreset`)
and the ``local`` section, which only the single-machine trainer reads.

:class:`LocalPreset` is what ``backend: local`` validates against; a key of another backend
(verl's ``model.lora_rank``, ``parallel``...) is no key of it. How the trainer's flat settings
come from it is :meth:`terminal_agent.training.local.config.LocalTrainingConfig.from_preset`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from terminal_agent.errors import ConfigError
from terminal_agent.training.preset_config import TrainingPreset, _Section


class LocalLoraSection(_Section):
    """LoRA of the local trainer."""

    rank: int = Field(8, ge=1)
    """LoRA rank."""
    alpha: int = Field(16, ge=1)
    """LoRA alpha."""
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """LoRA dropout (off while sampling: the policy samples in eval mode)."""
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])
    """Module names that get adapters."""


class SftWarmStartSection(_Section):
    """Supervised warm start on reference solutions before GRPO (local trainer)."""

    enabled: bool = False
    """Run the warm start."""
    epochs: int = Field(1, ge=1)
    """Passes over the solution transcripts."""
    lr: float = Field(1e-4, gt=0.0)
    """Learning rate of the warm start."""


class LocalSection(_Section):
    """The single-machine GRPO trainer (``backend: local`` only)."""

    device: Literal["cpu", "cuda", "auto"] = "auto"
    """Where the policy runs; ``auto`` picks CUDA when available."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """Weights' dtype (LoRA weights train in it too)."""
    lora: LocalLoraSection = Field(default_factory=LocalLoraSection)
    """LoRA adapters trained instead of the full model."""
    steps: int = Field(10, ge=1)
    """GRPO steps."""
    sft_warm_start: SftWarmStartSection = Field(default_factory=SftWarmStartSection)
    """Optional supervised warm start."""
    num_threads: int | None = Field(None, ge=1)
    """torch CPU threads; None = torch's default."""
    seed: int = 0
    """Seed of the data order, the sampling and the LoRA init (``data.split_seed`` seeds the train/held-out split)."""
    val_max_tasks: int | None = Field(None, ge=1)
    """Held-out tasks of one validation pass (``trainer.test_freq``, ``trainer.val_before_train``): a sample seeded
    by 0, the same tasks every pass; None: all of them."""
    stream_update: bool = True
    """Start each graded group's forward and backward passes while the step's other episodes still run."""
    micro_batch_tokens: int = Field(4096, ge=64)
    """Token budget of one forward and backward pass of the update (rows x longest row)."""
    sampler: Literal["auto", "continuous", "batched", "vllm"] = "auto"
    """What samples the policy: auto (the continuous sampler, or the batched one where it cannot run the model),
    continuous, batched, or vllm (vLLM's engine where installed; docs/models.md, "Sampling through vLLM")."""
    curriculum: Literal["none", "easy_to_hard"] = "none"
    """Train-task order: ``none`` draws every task from the start; ``easy_to_hard`` opens the train split by
    the tasks' difficulty (easy, then medium, then hard) over the first ``curriculum_share`` of the steps."""
    curriculum_share: float = Field(0.5, gt=0.0, le=1.0)
    """Share of ``local.steps`` over which ``easy_to_hard`` opens the harder levels, one level per equal part."""


class LocalPreset(TrainingPreset):
    """A ``backend: local`` preset: the project's single-machine GRPO trainer."""

    backend: Literal["local"]
    """``local``."""
    local: LocalSection
    """The local trainer's own settings."""


def local_preset(preset: TrainingPreset) -> LocalPreset:
    """``preset`` as the local backend's preset (what ``backend: local`` loads as); any other is a ConfigError."""
    if not isinstance(preset, LocalPreset):
        raise ConfigError(f"preset {preset.name!r} is backend {preset.backend}, not local")
    return preset


__all__ = ["LocalLoraSection", "LocalPreset", "LocalSection", "SftWarmStartSection", "local_preset"]
