"""Training presets: typed, loaded from the YAML files in ``training/presets``, changed by ``key=value``.

A preset is data. ``load_preset("prod_32b_8_gpus", ["rollout.n=16"])`` reads the packaged YAML
(or a path to one), follows ``extends:`` to its parent, applies the dotted overrides and returns
a validated :class:`TrainingPreset`. Every error is a :class:`ConfigError` that names the exact
key (``batch.train_batch_size``), never a pydantic dump.

What the keys mean for verl/rLLM is in :mod:`terminal_agent.training.verl.overrides`; the
arithmetic that a preset must satisfy is in :mod:`terminal_agent.training.geometry_checks`.
"""

from __future__ import annotations

import copy
import typing
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from terminal_agent.errors import ConfigError
from terminal_agent.harbor_jobs.training_trials import RolloutTrialsConfig
from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.training.algorithms.advantages import ADVANTAGE_ESTIMATORS
from terminal_agent.training.trainer_registry import TRAINER_BACKENDS
from terminal_agent.user_files import read_user_text

PRESET_PACKAGE = "terminal_agent.training.presets"
#: Loss aggregation modes verl 0.9.1 accepts (``ActorConfig.__post_init__``).
VerlLossAggMode = Literal["token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-mean",
                          "seq-mean-token-sum-norm"]
VERL_LOSS_AGG_MODES: tuple[VerlLossAggMode, ...] = typing.get_args(VerlLossAggMode)
#: Where a run's metrics go (``trainer.loggers``).
LoggerName = Literal["console", "wandb", "tensorboard", "file"]
#: Advantage estimators the verl backend computes: rLLM's unified trainer computes ``grpo`` itself (population std,
#: the registry's ``grpo``); the other names of ``ADVANTAGE_ESTIMATORS`` are the local trainer's.
VERL_ADV_ESTIMATORS = ("grpo",)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True, use_attribute_docstrings=True)


class ModelSection(_Section):
    """The policy being trained."""

    path: str
    """Hugging Face id or local directory of the model; ``embedded`` = the packaged SmolLM2-135M (for verl its
    converted transformers directory in the cache, made once by ``ensure_embedded_model_cached``)."""
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


class ClusterSection(_Section):
    """Machines of the run."""

    nodes: int = Field(1, ge=1)
    """Number of machines (Ray nodes)."""
    gpus_per_node: int = Field(1, ge=0)
    """GPUs on each machine (0 only for local CPU presets)."""

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node


class ParallelSection(_Section):
    """How the model is split across GPUs."""

    tensor_parallel: int = Field(1, ge=1)
    """vLLM tensor parallel size of one rollout replica (GPUs per inference engine, inside one node)."""
    sequence_parallel: int = Field(1, ge=1)
    """Ulysses sequence parallel size of the FSDP actor/ref (GPUs sharing one sequence, inside one node)."""
    rollout_replicas: int | None = Field(None, ge=1)
    """vLLM replicas you plan for (checked: TP x replicas must fit the GPUs). verl's hybrid engine runs
    GPU count / tensor_parallel replicas, which None stands for; nothing else reads this field."""


class DataSection(_Section):
    """Where the tasks come from and how they split into train and validation."""

    tasks: str | None = "dataset/latest_verified.csv"
    """Task source converted to parquet at launch (CSV, task directory or directory of them); None with train_files."""
    val_fraction: float = Field(0.1, ge=0.0, lt=1.0)
    """Share of ``tasks`` held out for validation (deterministic by task id and ``split_seed``)."""
    split_seed: int = 0
    """Seed of the train/validation split."""
    seed: int | None = None
    """verl path: seed of the order in which train tasks are drawn (verl's ``data.seed``); None: verl's default."""
    train_files: str | None = None
    """An existing train parquet (our converter's rows); used as is instead of converting ``tasks``."""
    val_files: str | None = None
    """An existing validation parquet; used with ``train_files``."""
    splits: str | None = None
    """A frozen splits file (``dataset/splits/splits.json``): its ``train`` split is trained on and its ``held_out``
    split validates, shipped tasks looked up in ``tasks`` and family instances regenerated; None: ``tasks`` split
    by ``val_fraction``."""
    task_ids: list[str] | None = None
    """verl path: keep only these task ids (of the train and the validation tasks, in their order); None keeps all."""
    only_exported: bool = False
    """verl path: keep only the tasks whose images the bwrap export holds (``manifest.json`` of
    ``sandbox.env.sandbox.bwrap.images_dir``, else of ``$TERMINAL_AGENT_IMAGES_DIR``)."""

    @model_validator(mode="after")
    def _one_source(self) -> "DataSection":
        if self.tasks is None and self.train_files is None:
            raise ValueError("set data.tasks (a task source) or data.train_files (a parquet file)")
        if self.train_files is not None and (self.task_ids is not None or self.only_exported or self.splits):
            raise ValueError("data.task_ids, data.only_exported and data.splits choose tasks of data.tasks; a ready "
                             "parquet (data.train_files) is used as it is")
        return self


class RolloutSection(_Section):
    """Sampling of the group of episodes per task."""

    n: int = Field(8, ge=2)
    """Episodes per task (the GRPO group size; at least 2 so the group has a variance)."""
    temperature: float = Field(1.0, gt=0.0)
    """Sampling temperature while training (the local trainer takes its logprobs at it too)."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """Nucleus sampling while training."""
    val_n: int = Field(1, ge=1)
    """Episodes per validation task."""
    val_temperature: float = Field(0.6, gt=0.0)
    """Sampling temperature of validation episodes."""
    gpu_memory_utilization: float = Field(0.6, gt=0.0, le=1.0)
    """Share of each GPU's memory vLLM may take (weights + KV cache)."""
    enforce_eager: bool = False
    """vLLM without torch.compile and CUDA graphs: starts about a minute sooner, decodes slower."""


class BatchSection(_Section):
    """Batch geometry (tasks, not episodes: verl multiplies by ``rollout.n``)."""

    train_batch_size: int = Field(..., ge=1)
    """Tasks per training step."""
    ppo_mini_batch_size: int = Field(..., ge=1)
    """Tasks per optimizer step (a step's batch is split into train_batch_size / ppo_mini_batch_size updates)."""
    micro_batch_size_per_gpu: int = Field(1, ge=1)
    """Sequences per forward/backward on one GPU (gradient accumulation fills the mini batch)."""
    log_prob_micro_batch_size_per_gpu: int | None = Field(None, ge=1)
    """Sequences per log-prob pass on one GPU; None = ``micro_batch_size_per_gpu``."""
    max_tokens_per_gpu: int | None = Field(None, ge=256)
    """Micro batches cut by tokens instead of sequences (verl's dynamic batch size): each forward/backward on one
    GPU takes whole rows up to this many tokens, and each log-prob pass up to twice as many; the two
    ``*_micro_batch_size_per_gpu`` keys are then unused. With padding-free rows a micro batch costs what its
    tokens cost, so a few large ones beat many small ones. None: fixed micro batches of sequences."""


class LengthsSection(_Section):
    """Token lengths. The whole context, not one reply, is what vLLM's max_model_len bounds."""

    max_prompt_length: int = Field(..., ge=64)
    """First prompt (system prompt + instruction)."""
    max_response_length_per_turn: int = Field(..., ge=16)
    """Cap of one model reply (per-turn max_tokens)."""
    max_model_len: int = Field(..., ge=128)
    """Whole context of an episode: first prompt + every reply + every observation."""

    @property
    def trajectory_response_length(self) -> int:
        """Tokens after the first prompt that one episode may use (verl's data.max_response_length)."""
        return self.max_model_len - self.max_prompt_length


class AgentSection(_Section):
    """Agent loop settings during training."""

    max_turns: int = Field(30, ge=1)
    """Model replies per episode; the episode is graded when they run out."""
    trajectory_timeout_s: float = Field(1800.0, gt=0)
    """Wall clock of one episode; past it the episode is cut and graded."""
    compaction: bool = False
    """Summarise old turns. Must stay off for verl: rewritten history makes rLLM zero every response mask."""
    parallel_episodes: int = Field(64, ge=1)
    """Episodes run at once by rLLM's workflow engine (each holds one container)."""


class AlgorithmSection(_Section):
    """GRPO and its loss."""

    adv_estimator: str = "grpo"
    """Advantage estimator, a name in ``ADVANTAGE_ESTIMATORS`` (``terminal_agent.training.algorithms.advantages``):
    ``grpo`` (rLLM's, population std) or ``grpo_sample_std`` (verl's, sample std), or one registered there. The
    verl backend computes ``grpo`` only (:data:`VERL_ADV_ESTIMATORS`); the local trainer computes every one."""
    norm_adv_by_std_in_grpo: bool = True
    """Divide the group-centred reward by the group's standard deviation."""
    lr: float = Field(1e-6, gt=0.0)
    """Actor learning rate. The default is a full fine-tuning rate (verl, ``model.lora_rank: 0``); LoRA wants a
    higher one (the local presets set 1e-5; a local config built without a preset defaults to 1e-4)."""
    clip_ratio_low: float = Field(0.2, ge=0.0)
    """PPO clip below 1 (ratio floor 1 - low)."""
    clip_ratio_high: float = Field(0.28, ge=0.0)
    """PPO clip above 1 (ratio ceiling 1 + high; DAPO's clip-higher)."""
    clip_ratio_c: float = Field(3.0, gt=1.0)
    """Dual-clip bound for negative advantages."""
    loss_agg_mode: VerlLossAggMode = "token-mean"
    """How token losses become one loss (verl's names)."""
    use_kl_loss: bool = False
    """Add a KL(policy || reference) term to the loss (needs a reference model; the local trainer's reference is
    the model with its adapter disabled)."""
    kl_loss_coef: float = Field(0.001, ge=0.0)
    """Weight of the KL term."""
    kl_loss_type: Literal["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3", "full"] = "low_var_kl"
    """KL estimator (verl's names)."""
    grad_clip: float = Field(1.0, gt=0.0)
    """Gradient norm clip; verl 0.9.1 reads it as ``actor.optim.clip_grad``. A non-finite norm skips the optimizer
    step (verl and the local trainer)."""
    entropy_coeff: float = Field(0.0, ge=0.0)
    """Entropy bonus weight (0 = none)."""
    reject_zero_variance_groups: bool = True
    """Drop groups whose episodes all got the same reward (no GRPO signal)."""
    old_log_probs: Literal["actor", "sampler"] = "actor"
    """Where the PPO ratio's old-policy log-probs come from on the verl path. ``actor``: a forward pass of the actor
    over the step's batch before the update (verl's default; 3-5 s of a verl_1gpu step on the H100). ``sampler``: the
    log-probs vLLM returned while sampling (rLLM's rollout-correction bypass): no extra pass, but any gap between
    sampler and actor (bf16 kernels, the LoRA merge) enters the ratio as if it were the policy's own change."""

    @field_validator("adv_estimator")
    @classmethod
    def _registered_estimator(cls, name: str) -> str:
        ADVANTAGE_ESTIMATORS.get(name)  # raises ConfigError listing the valid names
        return name


class OffloadSection(_Section):
    """FSDP CPU offload."""

    param: bool = False
    """Keep actor/ref parameters on the CPU between uses."""
    optimizer: bool = False
    """Keep optimizer state on the CPU between steps."""


class TrainerSection(_Section):
    """Loop length, checkpoints, validation, logging."""

    total_epochs: int = Field(1, ge=1)
    """Passes over the train tasks (ignored when total_training_steps is set)."""
    total_training_steps: int | None = Field(None, ge=1)
    """Stop after this many steps; None = epochs decide."""
    save_freq: int = Field(10, ge=-1)
    """Checkpoint every this many steps (-1 = never)."""
    test_freq: int = Field(10, ge=-1)
    """Validate every this many steps (-1 = never)."""
    val_before_train: bool = True
    """Validate once before the first step (the baseline)."""
    loggers: list[LoggerName] = Field(default_factory=lambda: list[LoggerName](["console", "wandb"]))
    """Metric sinks. ``file`` (verl path): one JSON line per step in ``<run dir>/verl_metrics.jsonl`` (verl's file
    logger; the launcher sets ``VERL_FILE_LOGGER_PATH`` unless ``runtime_env.env_vars`` does)."""
    wandb_mode: Literal["offline", "online", "disabled"] = "offline"
    """WANDB_MODE of the run; offline writes a run directory that ``wandb sync`` can upload later."""
    project: str = "terminal-agent"
    """Project name (wandb and checkpoint directory)."""
    experiment: str | None = None
    """Experiment name; None = the preset's name."""
    output_dir: str = "runs"
    """Directory of runs; the run directory is ``output_dir/experiment``."""
    resume: Literal["auto", "disable", "resume_path"] = "auto"
    """verl resume mode: auto = latest checkpoint of the run directory, resume_path = ``resume_from_path``."""
    resume_from_path: str | None = None
    """Checkpoint directory (``.../global_step_N``) for resume=resume_path."""
    max_checkpoints_to_keep: int | None = Field(None, ge=1)
    """Older checkpoints are deleted beyond this many; None keeps all."""
    stall_timeout_s: int | None = Field(1800, ge=60)
    """verl path, with the ``file`` logger: stop the run (exit 4, the newest worker error in ``<run dir>/stalled.txt``)
    when no step has been logged for this many seconds, the first step counted from the launch; None: wait for ever.
    A failure inside a Ray worker can leave verl's driver waiting without end (a broken LoRA weight sync did)."""
    harbor_rollouts: RolloutTrialsConfig = Field(default_factory=RolloutTrialsConfig)
    """verl path: which steps' training episodes the rLLM Workflow keeps as Harbor trials in ``<run dir>/rollouts/``
    (``enabled``, ``every_n_steps``, ``only_groups_with_variance``, ``max_disk_mb``; ``terminal-agent view RUN`` opens
    them; docs/harbor_jobs.md). A local preset sets ``local.harbor_rollouts`` instead."""

    @model_validator(mode="after")
    def _resume_path(self) -> "TrainerSection":
        if self.resume == "resume_path" and not self.resume_from_path:
            raise ValueError("trainer.resume=resume_path needs trainer.resume_from_path")
        return self


class SandboxSection(_Section):
    """Where episodes run."""

    backend: str = "docker"
    """Sandbox backend of the environment by name (``terminal_agent.sandbox.backends``: docker, bwrap, ...), or
    ``auto``: resolved when the launch is planned, docker where a Docker daemon answers, else bwrap."""
    env: dict[str, Any] = Field(default_factory=dict)
    """Extra ``EnvConfig`` settings passed as rLLM env_args (``sandbox``, ``actions``, ``grading``, ``judge``)."""


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
    harbor_rollouts: RolloutTrialsConfig = Field(default_factory=RolloutTrialsConfig)
    """Which steps' episodes the local trainer keeps as Harbor trials in ``RUN/rollouts/`` (docs/harbor_jobs.md)."""
    sampler: Literal["auto", "continuous", "batched", "vllm"] = "auto"
    """What samples the policy: auto (the continuous sampler, or the batched one where it cannot run the model),
    continuous, batched, or vllm (vLLM's engine where installed; docs/models.md, "Sampling through vLLM")."""
    curriculum: Literal["none", "easy_to_hard"] = "none"
    """Train-task order: ``none`` draws every task from the start; ``easy_to_hard`` opens the train split by
    the tasks' difficulty (easy, then medium, then hard) over the first ``curriculum_share`` of the steps."""
    curriculum_share: float = Field(0.5, gt=0.0, le=1.0)
    """Share of ``local.steps`` over which ``easy_to_hard`` opens the harder levels, one level per equal part."""


class TrainingPreset(_Section):
    """One training run, everything a launch needs."""

    name: str
    """Preset name (file stem); the default experiment name."""
    description: str = ""
    """One line for the preset table."""
    backend: str
    """A name in ``TRAINER_BACKENDS`` (``training/trainer_registry.py``): ``verl``: rLLM + verl on GPUs (Ray, vLLM);
    ``local``: the project's single-machine trainer."""
    model: ModelSection
    """The policy."""
    cluster: ClusterSection = Field(default_factory=ClusterSection)
    """Machines."""
    parallel: ParallelSection = Field(default_factory=ParallelSection)
    """Tensor / sequence parallelism."""
    data: DataSection = Field(default_factory=DataSection)
    """Tasks and splits."""
    rollout: RolloutSection = Field(default_factory=RolloutSection)
    """Sampling."""
    batch: BatchSection
    """Batch geometry."""
    lengths: LengthsSection
    """Token lengths."""
    agent: AgentSection = Field(default_factory=AgentSection)
    """Agent loop."""
    algorithm: AlgorithmSection = Field(default_factory=AlgorithmSection)
    """GRPO settings."""
    offload: OffloadSection = Field(default_factory=OffloadSection)
    """CPU offload."""
    trainer: TrainerSection = Field(default_factory=TrainerSection)
    """Loop, checkpoints, logging."""
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    """Sandbox backend and env settings."""
    reward: RewardConfig = Field(default_factory=RewardConfig)
    """Reward mix (the env's own RewardConfig: test/judge weights, judge failure policy)."""
    runtime_env: RuntimeEnvSection = Field(default_factory=RuntimeEnvSection)
    """Ray runtime env additions of a verl run (environment variables of every worker)."""
    local: LocalSection | None = None
    """Local trainer settings; required for ``backend: local``, refused for ``verl``."""
    _source: str | None = PrivateAttr(default=None)
    _command_line: tuple[str, ...] = PrivateAttr(default=())

    @property
    def source(self) -> str:
        """Where the preset was read (a YAML file's path, or ``preset NAME`` for a packaged one); error messages
        about its keys name it."""
        return self._source or f"preset {self.name}"

    @property
    def command_line_keys(self) -> tuple[str, ...]:
        """The dotted preset keys set by ``key=value`` overrides (what the dry run credits to the command line)."""
        return self._command_line

    @field_validator("backend")
    @classmethod
    def _registered_backend(cls, name: str) -> str:
        TRAINER_BACKENDS.get(name)  # a ConfigError (a ValueError) listing the registered backends
        return name

    @model_validator(mode="after")
    def _backend_sections(self) -> "TrainingPreset":
        TRAINER_BACKENDS.get(self.backend).check_preset(self)  # the hook of TrainerBackend
        return self

    @property
    def experiment(self) -> str:
        return self.trainer.experiment or self.name

    @property
    def run_dir(self) -> Path:
        return Path(self.trainer.output_dir) / self.experiment


# --- loading -----------------------------------------------------------------------------------
def preset_names() -> list[str]:
    """Names of the packaged presets, sorted."""
    root = resources.files(PRESET_PACKAGE)
    return sorted(item.name[: -len(".yaml")] for item in root.iterdir() if item.name.endswith(".yaml"))


MAX_PRESET_BYTES = 1024 * 1024
"""Largest preset file read (the packaged ones are about 2 KiB)."""


def _read_yaml(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {exc}") from None
    except RecursionError:  # the YAML parser recurses per level of nesting
        raise ConfigError(f"{where}: not valid YAML: nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a preset must be a YAML mapping, not {type(data).__name__}")
    bad_keys = [key for key in data if not isinstance(key, str)]
    if bad_keys:
        raise ConfigError(f"{where}: {bad_keys[0]!r}: a preset's keys are names, not {type(bad_keys[0]).__name__}")
    return data


def _source_of(name_or_path: str | Path) -> str:
    """How messages name a preset: the path of a YAML file, or ``preset NAME`` for a packaged one."""
    path = Path(name_or_path)
    is_file = path.suffix in {".yaml", ".yml"} and (path.exists() or path.is_symlink())
    return str(path) if is_file else f"preset {name_or_path}"


def shown_input(value: Any, limit: int = 120) -> str:
    """``value``'s repr for a message, cut to ``limit`` characters (a preset value can be megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _raw_preset(name_or_path: str | Path, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """The preset's mapping with ``extends:`` merged in (parent first)."""
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml"} and (path.exists() or path.is_symlink()):
        text = read_user_text(path, kind="preset file", max_bytes=MAX_PRESET_BYTES)
        data, name = _read_yaml(text, str(path)), path.stem
    else:
        name = str(name_or_path)
        resource = resources.files(PRESET_PACKAGE) / f"{name}.yaml"
        if not resource.is_file():
            raise ConfigError(f"unknown preset {name!r}; presets: {', '.join(preset_names())} (or a path to a YAML file)")
        data = _read_yaml(resource.read_text(), f"preset {name}")
    if name in seen:
        raise ConfigError(f"preset {name!r}: 'extends' loops ({' -> '.join(seen + (name,))})")
    parent = data.pop("extends", None)
    data.setdefault("name", name)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ConfigError(f"{_source_of(name_or_path)}: extends: must be a preset name or a YAML file, not "
                          f"{type(parent).__name__}")
    try:
        parent_data = _raw_preset(parent, seen + (name,))
    except ConfigError as exc:
        raise ConfigError(f"{_source_of(name_or_path)}: extends: {exc}") from None
    merged = deep_merge(parent_data, data)
    merged["name"] = data["name"]
    merged.setdefault("description", "")
    return merged


def deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``update`` laid over it; mappings merge key by key, anything else replaces."""
    out = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"rollout.n=16"`` -> (``["rollout", "n"]``, 16). Values are YAML scalars/lists (``null``, ``[a, b]``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"override {text!r} is not key=value (e.g. rollout.n=16)")
    parts = key.split(".")
    if any(not part for part in parts):
        raise ConfigError(f"override key {key!r} has an empty part")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw  # not YAML: the plain string (the model's validation decides)
    return parts, value


def _model_for(parts: list[str]) -> tuple[type[BaseModel] | None, str]:
    """The pydantic model that owns the last part of ``parts`` (None: inside a free mapping)."""
    model: type[BaseModel] | None = TrainingPreset
    walked: list[str] = []
    for part in parts[:-1]:
        walked.append(part)
        if model is None:
            return None, ".".join(walked)
        field = model.model_fields.get(part)
        if field is None:
            break
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
    return model, ".".join(walked)


def is_preset_key(parts: list[str]) -> bool:
    """Whether the dotted key ``parts`` names a preset key: a field of :class:`TrainingPreset` or of one of its
    sections, or a name inside one of its free mappings (``sandbox.env.*``, ``runtime_env.env_vars.*``)."""
    model: type[BaseModel] = TrainingPreset
    for index, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return False
        if index == len(parts) - 1:
            return True
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        submodel = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if submodel is None:
            return any(typing.get_origin(c) is dict or c is dict for c in candidates)  # a free mapping
        model = submodel
    return True


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``data`` with each dotted ``key=value`` set; an unknown key is a ConfigError listing the valid ones."""
    out = copy.deepcopy(data)
    for text in overrides:
        parts, value = parse_override(text)
        model, parent = _model_for(parts)
        if model is not None and parts[-1] not in model.model_fields:
            valid = ", ".join(sorted(model.model_fields))
            where = f"section {parent!r}" if parent else "a preset"
            hint = ("; rLLM/verl hydra keys (and +key=value additions) go to launch_training.py with a verl preset"
                    if not parent else "")
            raise ConfigError(f"unknown key {'.'.join(parts)!r}: {where} has {valid}{hint}")
        target = out
        for index, part in enumerate(parts[:-1]):
            child = target.get(part)
            if child is None:
                child = target[part] = {}
            if not isinstance(child, dict):
                raise ConfigError(f"override {'.'.join(parts)!r}: {'.'.join(parts[: index + 1])!r} is not a section")
            target = child
        target[parts[-1]] = value
    return out


def preset_from_mapping(data: dict[str, Any], source: str | None = None) -> TrainingPreset:
    """Validate ``data``; the first error names its dotted key (after ``source``, the file, when given)."""
    try:
        preset = TrainingPreset.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first.get("loc", ())) or "preset"
        message = str(first.get("msg", exc)).removeprefix("Value error, ")
        if first.get("type") == "extra_forbidden":
            message = "unknown key"
        shown = f" (got {shown_input(first['input'])})" if "input" in first and first.get("type") != "missing" and (
            not isinstance(first["input"], dict)) else ""
        raise ConfigError(f"{source + ': ' if source else ''}{key}: {message}{shown}") from None
    preset._source = source
    return preset


def load_preset(name_or_path: str | Path, overrides: list[str] | None = None) -> TrainingPreset:
    """The packaged preset ``name`` (or a YAML file), with ``overrides`` applied, validated; every error is a
    :class:`ConfigError` naming the file (or the packaged preset) and the key."""
    source = _source_of(name_or_path)
    overrides = list(overrides or ())
    try:
        data = apply_overrides(_raw_preset(name_or_path), overrides)
    except RecursionError:  # a self-referencing YAML alias (``&a [*a]``) nests without end
        raise ConfigError(f"{source}: a YAML alias refers to itself (nesting without end)") from None
    preset = preset_from_mapping(data, source)
    preset._command_line = tuple(".".join(parse_override(text)[0]) for text in overrides)
    return preset


def preset_to_yaml(preset: TrainingPreset) -> str:
    """The resolved preset as YAML (field order kept)."""
    return yaml.safe_dump(preset.model_dump(mode="json"), sort_keys=False)
