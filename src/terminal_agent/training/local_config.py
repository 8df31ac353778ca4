"""The local trainer's own typed settings, flat, and how a :class:`TrainingPreset` maps onto them.

The trainer reads only :class:`LocalTrainingConfig`; :meth:`LocalTrainingConfig.from_preset` is
the one place that knows the preset's section layout (``rollout.n``, ``algorithm.*``,
``local.lora.*``...; :data:`PRESET_KEY_OF_FIELD`), and the one the launcher's dry run and the
launch both call. It refuses, naming the preset key, a value the local trainer cannot run and a
key it would ignore (:data:`VERL_ONLY_KEYS` set to anything but its default, and the values
:func:`local_preset_problems` lists). Tests and the experiment command build the config directly.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terminal_agent.harbor_jobs.training_trials import RolloutTrialsConfig
from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.sandbox.config import SandboxConfig

from terminal_agent.training.algorithms.advantages import ADVANTAGE_ESTIMATORS
from terminal_agent.training.algorithms.kl_penalty import KL_ESTIMATORS
from terminal_agent.training.algorithms.loss_aggregation import LOSS_AGG_MODES
from terminal_agent.training.algorithms.policy_loss import ActorLossConfig
from terminal_agent.training.preset_config import shown_input


class LocalTrainingConfig(BaseModel):
    """Everything one local GRPO run needs, except the tasks and the run directory."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    # --- model ------------------------------------------------------------------------------
    model_path: str = "embedded"
    """``embedded`` (the packaged SmolLM2-135M-Instruct) or a transformers model directory."""
    device: Literal["cpu", "cuda", "auto"] = "auto"
    """Where the policy runs; ``auto`` picks CUDA when available."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """Weights' dtype (LoRA weights train in it too)."""
    lora_rank: int = Field(8, ge=1)
    """LoRA rank."""
    lora_alpha: int = Field(16, ge=1)
    """LoRA alpha."""
    lora_dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """LoRA dropout (off while sampling: the policy samples in eval mode)."""
    lora_target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])
    """Module names that get adapters."""
    num_threads: int | None = Field(None, ge=1)
    """torch CPU threads; ``None``: torch's default."""

    # --- rollouts ---------------------------------------------------------------------------
    group_size: int = Field(4, ge=1)
    """Episodes per task in one step (the GRPO group, ``rollout.n``)."""
    tasks_per_step: int = Field(1, ge=1)
    """Tasks per step (``batch.train_batch_size``)."""
    temperature: float = Field(1.0, gt=0.0)
    """Sampling temperature (the logprobs are taken at it too)."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """Nucleus sampling mass."""
    max_turns: int = Field(4, ge=1)
    """Model replies per episode; the episode is graded when they run out."""
    max_response_length_per_turn: int = Field(128, ge=1)
    """Token cap of one reply."""
    max_model_len: int = Field(2048, ge=64)
    """Context of an episode (prompt + replies + observations); a turn that could not fit ends the episode, graded."""
    trajectory_timeout_s: float = Field(600.0, gt=0)
    """Wall clock of one episode."""
    concurrency: int | None = Field(None, ge=1)
    """Episodes (containers) at once; ``None``: one group (``group_size``)."""
    sampler: Literal["auto", "continuous", "batched", "vllm"] = "auto"
    """What samples the policy (``local.sampler``): ``auto`` the continuous-batching sampler, or the generic
    batched one for an architecture it does not run; ``continuous`` / ``batched`` that one only; ``vllm``
    vLLM's offline engine on the same GPU, the adapter carried over after every update (needs CUDA and
    vLLM installed; LoRA only). See docs/models.md."""

    # --- algorithm --------------------------------------------------------------------------
    adv_estimator: str = "grpo"
    """The advantage estimator: a name in :data:`terminal_agent.training.algorithms.advantages.ADVANTAGE_ESTIMATORS`
    (``grpo``, ``grpo_sample_std`` or one registered there)."""
    norm_adv_by_std_in_grpo: bool = True
    """Divide by the group's std."""
    lr: float = Field(1e-4, gt=0.0)
    """AdamW learning rate of the LoRA weights."""
    weight_decay: float = Field(0.01, ge=0.0)
    """AdamW weight decay (verl's default)."""
    clip_ratio_low: float = Field(0.2, ge=0.0)
    clip_ratio_high: float = Field(0.28, ge=0.0)
    clip_ratio_c: float = Field(3.0, gt=1.0)
    loss_agg_mode: str = "token-mean"
    """How token losses become one loss: verl's name, registered in
    :data:`terminal_agent.training.algorithms.loss_aggregation.LOSS_AGG_MODES`."""
    use_kl_loss: bool = False
    """KL(policy || base) term; the reference is the model with its adapter disabled."""
    kl_loss_coef: float = Field(0.001, ge=0.0)
    kl_loss_type: str = "low_var_kl"
    """The KL estimator: verl's name, registered in :data:`terminal_agent.training.algorithms.kl_penalty.KL_ESTIMATORS`."""
    entropy_coeff: float = Field(0.0, ge=0.0)
    grad_clip: float = Field(1.0, gt=0.0)
    """Max gradient norm; a non-finite norm skips the optimizer step (as verl does)."""
    reject_zero_variance_groups: bool = True
    """Drop groups whose rewards all agree."""
    mask_truncated: bool = False
    """Truncation policy: False trains budget-cut episodes on their graded reward; True masks them."""
    micro_batch_tokens: int = Field(4096, ge=64)
    """Token budget of one forward/backward (gradient accumulation is exact across micro-batches)."""
    stream_update: bool = True
    """Run each graded group's forward and backward passes while the step's other episodes still run
    (the gradients are normalised by the whole batch at the end); False: all of them after the rollouts."""
    harbor_rollouts: RolloutTrialsConfig = Field(default_factory=RolloutTrialsConfig)
    """Which steps' episodes are kept as Harbor trials in ``RUN/rollouts/`` (every Nth step, groups with reward
    variance only, a disk budget); ``terminal-agent view RUN`` opens them (docs/harbor_jobs.md)."""

    # --- loop -------------------------------------------------------------------------------
    steps: int = Field(2, ge=1)
    """GRPO steps."""
    seed: int = 0
    """Seed of data order, sampling and LoRA init."""
    curriculum: Literal["none", "easy_to_hard"] = "none"
    """Train-task order: ``none`` draws every task from the start; ``easy_to_hard`` draws easy tasks first
    and opens medium, then hard ones over the first ``curriculum_share`` of the steps (``TaskOrder``)."""
    curriculum_share: float = Field(0.5, gt=0.0, le=1.0)
    """Share of the steps over which ``easy_to_hard`` opens the harder levels, one level per equal part."""
    save_freq: int = Field(1, ge=-1)
    """Checkpoint every this many steps (-1: only at the end)."""
    keep_checkpoints: int | None = Field(2, ge=1)
    """Older checkpoints are deleted beyond this many; ``None`` keeps all."""
    wandb: bool = True
    """Log to a wandb run (offline unless ``wandb_mode`` says otherwise)."""
    wandb_mode: Literal["offline", "online", "disabled"] = "offline"
    project: str = "terminal-agent"
    experiment: str = "local"
    resume: bool = True
    """Continue from the run directory's latest checkpoint when there is one."""
    test_weight: float = Field(1.0, ge=0.0)
    judge_weight: float = Field(0.0, ge=0.0)
    reward: RewardConfig | None = None
    """The whole reward config (judge weight schedule included); None builds one from the two weights."""

    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    """Where episodes run: the sandbox backend (``docker``, ``bwrap``, ``ray``) and its settings; the
    SFT warm start, the GRPO rollouts and the learning experiment's evaluations all use it."""

    # --- validation on held-out tasks (terminal_agent.training.local_validation) --------------
    test_freq: int = Field(-1, ge=-1)
    """Validate every this many steps and after the last one (-1 or 0: never)."""
    val_before_train: bool = False
    """Validate once before the first GRPO step (after the SFT warm start, when there is one)."""
    val_n: int = Field(1, ge=1)
    """Episodes per held-out task in one validation pass."""
    val_temperature: float = Field(0.6, gt=0.0)
    """Sampling temperature of validation episodes."""
    val_max_tasks: int | None = Field(None, ge=1)
    """Held-out tasks per validation pass (a sample seeded by 0, the same every pass); ``None``: all."""

    # --- SFT warm start ---------------------------------------------------------------------
    sft_enabled: bool = False
    """Run a supervised warm start on reference-solution transcripts of the train tasks first."""
    sft_epochs: int = Field(1, ge=1)
    sft_lr: float = Field(1e-4, gt=0.0)

    @field_validator("adv_estimator")
    @classmethod
    def _registered_estimator(cls, name: str) -> str:
        ADVANTAGE_ESTIMATORS.get(name)  # raises ConfigError listing the valid names
        return name

    @field_validator("loss_agg_mode")
    @classmethod
    def _registered_loss_agg_mode(cls, name: str) -> str:
        LOSS_AGG_MODES.get(name)
        return name

    @field_validator("kl_loss_type")
    @classmethod
    def _registered_kl_estimator(cls, name: str) -> str:
        KL_ESTIMATORS.get(name)
        return name

    @property
    def episodes_at_once(self) -> int:
        return self.concurrency or self.group_size

    def actor_loss_config(self) -> ActorLossConfig:
        return ActorLossConfig(
            clip_ratio_low=self.clip_ratio_low,
            clip_ratio_high=self.clip_ratio_high,
            clip_ratio_c=self.clip_ratio_c,
            loss_agg_mode=self.loss_agg_mode,
            entropy_coeff=self.entropy_coeff,
            use_kl_loss=self.use_kl_loss,
            kl_loss_coef=self.kl_loss_coef,
            kl_loss_type=self.kl_loss_type,
        )

    def reward_config(self) -> RewardConfig:
        """The env's reward config: ``reward`` when given, else the two weights."""
        if self.reward is not None:
            return self.reward
        return RewardConfig(test_weight=self.test_weight, judge_weight=self.judge_weight)

    @property
    def validates(self) -> bool:
        """Whether the run asks for validation at all (before training or every ``test_freq`` steps)."""
        return self.val_before_train or self.test_freq > 0

    @classmethod
    def from_preset(cls, preset: Any, **overrides: Any) -> "LocalTrainingConfig":
        """The config a ``backend: local`` :class:`~terminal_agent.training.preset_config.TrainingPreset` runs.

        The one place a preset becomes the local trainer's config: the launcher's dry run and the
        launch both call it. Refuses (ConfigError) a preset key the local trainer would ignore
        (:func:`local_preset_problems`) and a value it cannot run, naming the preset key
        (``algorithm.kl_loss_type``), or the keyword of ``overrides`` that was given.
        """
        from pydantic import ValidationError

        from terminal_agent.errors import ConfigError

        where = f" (in {_source_of(preset)})"
        if preset.local is None:
            raise ConfigError(f"preset {preset.name!r} has no 'local' section (backend {preset.backend!r}){where}")
        problems = local_preset_problems(preset)
        if problems:
            raise ConfigError("; ".join(problems) + where)
        values: dict[str, Any] = {name: _preset_value(preset, key) for name, key in PRESET_KEY_OF_FIELD.items()
                                   if name not in OPTIONAL_PRESET_FIELDS}
        values.update({name: getattr(preset.local, key.rpartition(".")[2]) for name, key in OPTIONAL_PRESET_FIELDS.items()
                       if hasattr(preset.local, key.rpartition(".")[2])})
        trainer = preset.trainer
        try:
            sandbox = sandbox_config_of(preset)
        except ConfigError as exc:
            raise ConfigError(f"{exc}{where}") from None
        values.update(
            lora_target_modules=list(preset.local.lora.target_modules),
            wandb="wandb" in list(trainer.loggers),
            experiment=preset.experiment,
            resume=trainer.resume != "disable",
            sandbox=sandbox,
        )
        values.update(overrides)
        try:
            config = cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first.get("loc") else ""
            key = field if field in overrides else PRESET_KEY_OF_FIELD.get(field, field or f"preset {preset.name!r}")
            shown = (f" (got {shown_input(first['input'])})"
                     if "input" in first and not isinstance(first["input"], dict) else "")
            message = str(first.get("msg", exc)).removeprefix("Value error, ")
            raise ConfigError(f"{key}: {message} for the local trainer{shown}{where}") from None
        if config.sampler == "vllm":
            from terminal_agent.models.vllm_sampler import require_vllm

            key = "sampler" if "sampler" in overrides else "local.sampler"
            if config.device == "cpu":
                raise ConfigError(f"{key}: vllm samples on a CUDA GPU, but local.device is cpu; on CPU the project's "
                                  f"sampler runs ({key}=auto){where}")
            try:
                require_vllm(key)
            except ConfigError as exc:
                raise ConfigError(f"{exc}{where}") from None
        return config


def _source_of(preset: Any) -> str:
    """The file (or packaged preset) ``preset`` was read from, for messages."""
    return getattr(preset, "source", None) or f"preset {getattr(preset, 'name', '?')}"


#: The preset key behind each field of :class:`LocalTrainingConfig` that a preset sets (errors name it).
#: ``sandbox`` comes from ``sandbox.backend`` and ``sandbox.env.sandbox`` (:func:`sandbox_config_of`); fields not
#: listed (``weight_decay``, ``mask_truncated``) keep their defaults.
PRESET_KEY_OF_FIELD: dict[str, str] = {
    "model_path": "model.path",
    "device": "local.device",
    "dtype": "local.dtype",
    "lora_rank": "local.lora.rank",
    "lora_alpha": "local.lora.alpha",
    "lora_dropout": "local.lora.dropout",
    "lora_target_modules": "local.lora.target_modules",
    "num_threads": "local.num_threads",
    "concurrency": "agent.parallel_episodes",
    "sampler": "local.sampler",
    "harbor_rollouts": "local.harbor_rollouts",
    "group_size": "rollout.n",
    "tasks_per_step": "batch.train_batch_size",
    "temperature": "rollout.temperature",
    "top_p": "rollout.top_p",
    "max_turns": "agent.max_turns",
    "max_response_length_per_turn": "lengths.max_response_length_per_turn",
    "max_model_len": "lengths.max_model_len",
    "trajectory_timeout_s": "agent.trajectory_timeout_s",
    "adv_estimator": "algorithm.adv_estimator",
    "norm_adv_by_std_in_grpo": "algorithm.norm_adv_by_std_in_grpo",
    "lr": "algorithm.lr",
    "clip_ratio_low": "algorithm.clip_ratio_low",
    "clip_ratio_high": "algorithm.clip_ratio_high",
    "clip_ratio_c": "algorithm.clip_ratio_c",
    "loss_agg_mode": "algorithm.loss_agg_mode",
    "use_kl_loss": "algorithm.use_kl_loss",
    "kl_loss_coef": "algorithm.kl_loss_coef",
    "kl_loss_type": "algorithm.kl_loss_type",
    "entropy_coeff": "algorithm.entropy_coeff",
    "grad_clip": "algorithm.grad_clip",
    "reject_zero_variance_groups": "algorithm.reject_zero_variance_groups",
    "steps": "local.steps",
    "seed": "local.seed",
    "curriculum": "local.curriculum",
    "curriculum_share": "local.curriculum_share",
    "stream_update": "local.stream_update",
    "micro_batch_tokens": "local.micro_batch_tokens",
    "save_freq": "trainer.save_freq",
    "keep_checkpoints": "trainer.max_checkpoints_to_keep",
    "wandb": "trainer.loggers",
    "wandb_mode": "trainer.wandb_mode",
    "project": "trainer.project",
    "experiment": "trainer.experiment",
    "resume": "trainer.resume",
    "test_weight": "reward.test_weight",
    "judge_weight": "reward.judge_weight",
    "reward": "reward",
    "test_freq": "trainer.test_freq",
    "val_before_train": "trainer.val_before_train",
    "val_n": "rollout.val_n",
    "val_temperature": "rollout.val_temperature",
    "val_max_tasks": "local.val_max_tasks",
    "sft_enabled": "local.sft_warm_start.enabled",
    "sft_epochs": "local.sft_warm_start.epochs",
    "sft_lr": "local.sft_warm_start.lr",
}

#: Fields read from the preset's ``local`` section only when that section has the key (a newer key the
#: preset schema may not carry yet); otherwise the field keeps its default.
OPTIONAL_PRESET_FIELDS: dict[str, str] = {"sampler": "local.sampler", "harbor_rollouts": "local.harbor_rollouts"}

#: Preset keys the local trainer does not read, each with what a local preset uses instead. For
#: ``backend: local`` a preset may leave them out or set them to their defaults; any other value is refused.
VERL_ONLY_KEYS: dict[str, str] = {
    "model.lora_rank": "the local trainer's LoRA rank is local.lora.rank",
    "model.lora_alpha": "the local trainer's LoRA alpha is local.lora.alpha",
    "model.gradient_checkpointing": "the local trainer does not recompute activations",
    "model.trust_remote_code": "the local trainer loads models without remote code",
    "cluster.nodes": "the local trainer runs on one machine",
    "parallel.tensor_parallel": "the local trainer runs one policy on one device",
    "parallel.sequence_parallel": "the local trainer runs one policy on one device",
    "parallel.rollout_replicas": "the local trainer runs one policy on one device",
    "data.train_files": "the local trainer reads data.tasks (or data.splits), not parquet",
    "data.val_files": "the local trainer reads data.tasks (or data.splits), not parquet",
    "rollout.gpu_memory_utilization": "vLLM's share of GPU memory; the local sampler is not vLLM",
    "batch.micro_batch_size_per_gpu": "the local update splits its rows by a token budget",
    "batch.log_prob_micro_batch_size_per_gpu": "the local trainer takes the sampler's logprobs",
    "offload.param": "the local trainer has no FSDP offload",
    "offload.optimizer": "the local trainer has no FSDP offload",
    "trainer.total_epochs": "local.steps sets the length of a local run",
    "trainer.total_training_steps": "local.steps sets the length of a local run",
    "trainer.resume_from_path": "a local run resumes from its run directory's latest checkpoint",
    "trainer.harbor_rollouts": "the local trainer's Harbor rollouts are local.harbor_rollouts",
}

#: Keys of ``sandbox.env`` the local trainer reads (the rest of an ``EnvConfig`` is the verl Workflow's).
LOCAL_SANDBOX_ENV_KEYS = ("sandbox", "sandbox_config")


def _preset_value(preset: Any, key: str) -> Any:
    value = preset
    for part in key.split("."):
        value = getattr(value, part)
    return value


def _preset_default(preset: Any, key: str) -> Any:
    section_key, _, name = key.rpartition(".")
    section = _preset_value(preset, section_key)
    return type(section).model_fields[name].get_default(call_default_factory=True)


def local_preset_problems(preset: Any) -> list[str]:
    """Why ``preset`` (``backend: local``) cannot run as written: each message names a preset key the
    local trainer would ignore (:data:`VERL_ONLY_KEYS` set to another value than its default, and the
    values below) or a combination it cannot honour. Empty when the preset runs as it reads."""
    problems: list[str] = []
    for key, instead in VERL_ONLY_KEYS.items():
        value, default = _preset_value(preset, key), _preset_default(preset, key)
        if value != default:
            problems.append(f"{key}: verl-only, the local trainer ignores it ({instead}); leave it out or at its "
                            f"default {default!r} (got {value!r})")
    cluster, batch, trainer, data = preset.cluster, preset.batch, preset.trainer, preset.data
    if cluster.gpus_per_node > 1:
        problems.append(f"cluster.gpus_per_node: the local trainer uses one device (local.device), not "
                        f"{cluster.gpus_per_node} GPUs")
    elif cluster.gpus_per_node == 0 and preset.local.device == "cuda":
        problems.append("cluster.gpus_per_node: 0 GPUs, but local.device is cuda")
    if batch.ppo_mini_batch_size != batch.train_batch_size:
        problems.append(f"batch.ppo_mini_batch_size: the local trainer takes one optimizer step per step: set it to "
                        f"batch.train_batch_size ({batch.train_batch_size}), not {batch.ppo_mini_batch_size}")
    if preset.agent.compaction:
        problems.append("agent.compaction: the local trainer's agent never compacts (training replies stay verbatim)")
    if trainer.resume == "resume_path":
        problems.append("trainer.resume: resume_path is verl-only; a local run resumes from its run directory "
                        "(auto) or starts over (disable)")
    if "tensorboard" in trainer.loggers:
        problems.append("trainer.loggers: tensorboard is verl-only; the local trainer writes metrics.jsonl and wandb")
    for name in sorted(set(preset.sandbox.env) - set(LOCAL_SANDBOX_ENV_KEYS)):
        problems.append(f"sandbox.env.{name}: verl-only, the local trainer's env takes only sandbox.env.sandbox "
                        "(with sandbox.backend, agent.max_turns and reward)")
    if data.splits is not None:
        for key in ("val_fraction", "split_seed"):
            default = type(data).model_fields[key].default
            if getattr(data, key) != default:
                problems.append(f"data.{key}: not used with data.splits (the frozen file decides the held-out "
                                f"tasks); leave it at {default!r}")
    elif data.val_fraction == 0:
        asking = [key for key, on in (("trainer.test_freq", trainer.test_freq > 0),
                                      ("trainer.val_before_train", trainer.val_before_train)) if on]
        if asking:
            problems.append(f"{' and '.join(asking)}: validation asked, but the preset holds out no task "
                            "(data.val_fraction is 0 and data.splits is unset): set trainer.test_freq=-1 "
                            "trainer.val_before_train=false, or hold tasks out")
    return problems


def sandbox_config_of(preset: Any) -> SandboxConfig:
    """The preset's sandbox settings: ``sandbox.env.sandbox`` (an ``EnvConfig``'s sandbox section) with
    ``sandbox.backend`` on top, validated (a bad key is a ``ConfigError`` that names it)."""
    from pydantic import ValidationError

    from terminal_agent.errors import ConfigError

    section = getattr(preset, "sandbox", None)
    if section is None:
        return SandboxConfig()
    extra = dict((section.env or {}).get("sandbox") or (section.env or {}).get("sandbox_config") or {})
    try:
        return SandboxConfig.model_validate({**extra, "backend": section.backend})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first.get("loc", ())]
        key = "sandbox.backend" if loc == ["backend"] else ".".join(["sandbox.env.sandbox", *loc])
        message = "unknown key" if first.get("type") == "extra_forbidden" else str(first.get("msg", exc))
        shown = (f" (got {shown_input(first['input'])})"
                 if "input" in first and not isinstance(first["input"], dict) else "")
        raise ConfigError(f"{key}: {message.removeprefix('Value error, ')}{shown}") from None


__all__ = [
    "LOCAL_SANDBOX_ENV_KEYS", "LocalTrainingConfig", "PRESET_KEY_OF_FIELD", "VERL_ONLY_KEYS", "local_preset_problems",
    "sandbox_config_of",
]
