"""The verl backend's preset: the common sections (:class:`~terminal_agent.training.preset_config.TrainingPreset`)
with the keys only rLLM + verl read.

Each common section that verl reads more of is extended here by a section of the same name
(``model.lora_rank``, ``data.train_files``, ``rollout.gpu_memory_utilization``,
``batch.micro_batch_size_per_gpu``, ``algorithm.old_log_probs``, ``trainer.total_training_steps``...),
and ``parallel``, ``offload`` and ``runtime_env`` are verl's alone. A preset file therefore spells a
key where its topic is; a ``backend: local`` preset simply has none of these keys (an unknown key
there). What each key becomes in rLLM/verl's config is :mod:`terminal_agent.training.verl.overrides`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from terminal_agent.errors import ConfigError
from terminal_agent.training.preset_config import (
    AlgorithmSection,
    BatchSection,
    DataSection,
    ModelSection,
    RolloutSection,
    TrainerSection,
    TrainingPreset,
    _Section,
)

#: Where a verl run's metrics go (``trainer.loggers``): the common sinks and verl's tensorboard.
VerlLoggerName = Literal["console", "wandb", "tensorboard", "file"]
#: Advantage estimators the verl backend computes: rLLM's unified trainer computes ``grpo`` itself (population std,
#: the registry's ``grpo``); the other names of ``ADVANTAGE_ESTIMATORS`` are the local trainer's.
VERL_ADV_ESTIMATORS = ("grpo",)


class VerlModelSection(ModelSection):
    """The policy, with how verl's FSDP actor loads and trains it."""

    lora_rank: int = Field(0, ge=0)
    """LoRA rank on the verl path; 0 trains every weight (full fine-tuning)."""
    lora_alpha: int = Field(32, ge=1)
    """LoRA alpha on the verl path (used only when ``lora_rank > 0``)."""
    gradient_checkpointing: bool = True
    """Recompute activations in the backward pass (needed for long multi-turn contexts)."""
    trust_remote_code: bool = False
    """Let transformers run code shipped with the model."""
    attn_implementation: str | None = None
    """Attention kernel of the FSDP actor on the verl path (``terminal_agent_varlen``: torch's own varlen kernels, no
    extra package; ``flash_attention_2``; ``sdpa``; ``eager``); None keeps verl's default, ``flash_attention_2``, which
    needs the flash-attn package."""
    use_remove_padding: bool = True
    """verl's packed (padding-free) forward on the verl path; Ulysses sequence parallelism needs it. Needs an attention
    that finds the rows itself (``terminal_agent_varlen`` or ``flash_attention_2``); false runs padded rows with an
    attention mask (right for ``sdpa``)."""
    fused_kernels: Literal["off", "torch", "triton"] = "off"
    """How the verl actor turns hidden states into token log-probs and entropy. ``off``: the lm_head's logits, then
    verl's log-softmax, which without flash-attn's cross-entropy kernel loops over every token (one small kernel per
    token, forward and backward: the bulk of a step on a small model, measured 2026-12-07); ``torch``: verl's fused
    linear + log-prob in chunks of 512 tokens, no logits tensor, no extra package; ``triton``: verl's own Triton
    kernels for the same."""


class ParallelSection(_Section):
    """How the model is split across GPUs."""

    tensor_parallel: int = Field(1, ge=1)
    """vLLM tensor parallel size of one rollout replica (GPUs per inference engine, inside one node)."""
    sequence_parallel: int = Field(1, ge=1)
    """Ulysses sequence parallel size of the FSDP actor/ref (GPUs sharing one sequence, inside one node)."""
    rollout_replicas: int | None = Field(None, ge=1)
    """vLLM replicas you plan for (checked: TP x replicas must fit the GPUs). verl's hybrid engine runs
    GPU count / tensor_parallel replicas, which None stands for; nothing else reads this field."""


class VerlDataSection(DataSection):
    """Tasks and splits, with verl's ready parquet files, task filters and draw order."""

    seed: int | None = None
    """verl path: seed of the order in which train tasks are drawn (verl's ``data.seed``); None: verl's default."""
    train_files: str | None = None
    """An existing train parquet (our converter's rows); used as is instead of converting ``tasks``."""
    val_files: str | None = None
    """An existing validation parquet; used with ``train_files``."""
    task_ids: list[str] | None = None
    """verl path: keep only these task ids (of the train and the validation tasks, in their order); None keeps all."""
    only_exported: bool = False
    """verl path: keep only the tasks whose images the bwrap export holds (``manifest.json`` of
    ``sandbox.env.sandbox.bwrap.images_dir``, else of ``$TERMINAL_AGENT_IMAGES_DIR``)."""

    def ready_parquet(self) -> str | None:
        return self.train_files

    def missing_source_message(self) -> str:
        return "set data.tasks (a task source) or data.train_files (a parquet file)"

    @model_validator(mode="after")
    def _parquet_as_is(self) -> "VerlDataSection":
        if self.train_files is not None and (self.task_ids is not None or self.only_exported or self.splits):
            raise ValueError("data.task_ids, data.only_exported and data.splits choose tasks of data.tasks; a ready "
                             "parquet (data.train_files) is used as it is")
        return self


class VerlRolloutSection(RolloutSection):
    """Sampling, with vLLM's settings."""

    gpu_memory_utilization: float = Field(0.6, gt=0.0, le=1.0)
    """Share of each GPU's memory vLLM may take (weights + KV cache)."""
    enforce_eager: bool = False
    """vLLM without torch.compile and CUDA graphs: starts about a minute sooner, decodes slower."""

class VerlBatchSection(BatchSection):
    """Batch geometry, with the micro batches of verl's FSDP workers."""

    micro_batch_size_per_gpu: int = Field(1, ge=1)
    """Sequences per forward/backward on one GPU (gradient accumulation fills the mini batch)."""
    log_prob_micro_batch_size_per_gpu: int | None = Field(None, ge=1)
    """Sequences per log-prob pass on one GPU; None = ``micro_batch_size_per_gpu``."""
    max_tokens_per_gpu: int | None = Field(None, ge=256)
    """Micro batches cut by tokens instead of sequences (verl's dynamic batch size): each forward/backward on one
    GPU takes whole rows up to this many tokens, and each log-prob pass up to twice as many; the two
    ``*_micro_batch_size_per_gpu`` keys are then unused. With padding-free rows a micro batch costs what its
    tokens cost, so a few large ones beat many small ones. None: fixed micro batches of sequences."""

class VerlAlgorithmSection(AlgorithmSection):
    """GRPO and its loss, with where verl takes the old policy's log-probs."""

    old_log_probs: Literal["actor", "sampler"] = "actor"
    """Where the PPO ratio's old-policy log-probs come from on the verl path. ``actor``: a forward pass of the actor
    over the step's batch before the update (verl's default; 3-5 s of a verl_1gpu step on the H100). ``sampler``: the
    log-probs vLLM returned while sampling (rLLM's rollout-correction bypass): no extra pass, but any gap between
    sampler and actor (bf16 kernels, the LoRA merge) enters the ratio as if it were the policy's own change."""

    @field_validator("adv_estimator")
    @classmethod
    def _computed_by_verl(cls, name: str) -> str:
        if name not in VERL_ADV_ESTIMATORS:
            raise ValueError(f"{name!r} is computed by the local trainer only; backend verl computes "
                             f"{', '.join(VERL_ADV_ESTIMATORS)}")
        return name


class OffloadSection(_Section):
    """FSDP CPU offload."""

    param: bool = False
    """Keep actor/ref parameters on the CPU between uses."""
    optimizer: bool = False
    """Keep optimizer state on the CPU between steps."""

class VerlTrainerSection(TrainerSection):
    """Loop length, checkpoints, validation, logging, with verl's epochs, resume path and stall watchdog."""

    total_epochs: int = Field(1, ge=1)
    """Passes over the train tasks (ignored when total_training_steps is set)."""
    total_training_steps: int | None = Field(None, ge=1)
    """Stop after this many steps; None = epochs decide."""
    loggers: list[VerlLoggerName] = Field(  # type: ignore[assignment]  # verl takes more sinks than the common section
        default_factory=lambda: list[VerlLoggerName](["console", "wandb"]))
    """Metric sinks. ``file`` (verl path): one JSON line per step in ``<run dir>/verl_metrics.jsonl`` (verl's file
    logger; the launcher sets ``VERL_FILE_LOGGER_PATH`` unless ``runtime_env.env_vars`` does)."""
    resume: Literal["auto", "disable", "resume_path"] = "auto"  # type: ignore[assignment]  # verl adds resume_path
    """verl resume mode: auto = latest checkpoint of the run directory, resume_path = ``resume_from_path``."""
    resume_from_path: str | None = None
    """Checkpoint directory (``.../global_step_N``) for resume=resume_path."""
    stall_timeout_s: int | None = Field(1800, ge=60)
    """verl path, with the ``file`` logger: stop the run (exit 4, the newest worker error in ``<run dir>/stalled.txt``)
    when no step has been logged for this many seconds, the first step counted from the launch; None: wait for ever.
    A failure inside a Ray worker can leave verl's driver waiting without end (a broken LoRA weight sync did)."""

    @model_validator(mode="after")
    def _resume_path(self) -> "VerlTrainerSection":
        if self.resume == "resume_path" and not self.resume_from_path:
            raise ValueError("trainer.resume=resume_path needs trainer.resume_from_path")
        return self


class RuntimeEnvSection(_Section):
    """What every Ray worker of a verl run gets besides rLLM's own runtime env."""

    env_vars: dict[str, str] = Field(default_factory=dict)
    """Environment variables of every Ray worker (and of the launching process); they win over rLLM's defaults
    and over the variables forwarded from the launching shell. Numbers are taken as their text."""

    @field_validator("env_vars", mode="before")
    @classmethod
    def _text_values(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = {}
        for name, item in value.items():
            if isinstance(item, bool):
                raise ValueError(f"{name}: write the value as text ('1', 'true'), not a YAML boolean")
            out[name] = str(item) if isinstance(item, (int, float)) else item
        return out

class VerlPreset(TrainingPreset):
    """A ``backend: verl`` preset: rLLM + verl on GPUs (Ray, vLLM)."""

    backend: Literal["verl"]
    """``verl``."""
    model: VerlModelSection
    """The policy."""
    parallel: ParallelSection = Field(default_factory=ParallelSection)
    """Tensor / sequence parallelism."""
    data: VerlDataSection = Field(default_factory=VerlDataSection)
    """Tasks and splits."""
    rollout: VerlRolloutSection = Field(default_factory=VerlRolloutSection)
    """Sampling."""
    batch: VerlBatchSection
    """Batch geometry."""
    algorithm: VerlAlgorithmSection = Field(default_factory=VerlAlgorithmSection)
    """GRPO settings."""
    offload: OffloadSection = Field(default_factory=OffloadSection)
    """CPU offload."""
    trainer: VerlTrainerSection = Field(default_factory=VerlTrainerSection)
    """Loop, checkpoints, logging."""
    runtime_env: RuntimeEnvSection = Field(default_factory=RuntimeEnvSection)
    """Ray runtime env additions of a verl run (environment variables of every worker)."""


def verl_preset(preset: TrainingPreset) -> VerlPreset:
    """``preset`` as the verl backend's preset (what ``backend: verl`` loads as); any other is a ConfigError."""
    if not isinstance(preset, VerlPreset):
        raise ConfigError(f"preset {preset.name!r} is backend {preset.backend}, not verl")
    return preset


__all__ = [
    "OffloadSection", "ParallelSection", "RuntimeEnvSection", "VERL_ADV_ESTIMATORS", "VerlAlgorithmSection",
    "VerlBatchSection", "VerlDataSection", "VerlLoggerName", "VerlModelSection", "VerlPreset", "VerlRolloutSection",
    "VerlTrainerSection", "verl_preset",
]
