"""The local trainer's own typed settings, flat, and how a :class:`LocalPreset` maps onto them.

The trainer reads only :class:`LocalTrainingConfig`; :meth:`LocalTrainingConfig.from_preset` is
the one place that knows the preset's section layout (``rollout.n``, ``algorithm.*``,
``local.lora.*``...; :data:`PRESET_KEY_OF_FIELD`), and the one the launcher's dry run and the
launch run (built once, in the plan). A key of another backend is no key of a
:class:`LocalPreset` at all; it refuses, naming the preset key, a value the local trainer cannot
run (:func:`local_preset_problems`). Tests and the experiment command build the config directly.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

from terminal_agent.harbor_jobs.training_trials import RolloutTrialsConfig
from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.sandbox.config import SandboxConfig

from terminal_agent.training.algorithms.advantages import ADVANTAGE_ESTIMATORS
from terminal_agent.training.algorithms.kl_penalty import KL_ESTIMATORS
from terminal_agent.training.algorithms.loss_aggregation import LOSS_AGG_MODES
from terminal_agent.training.algorithms.policy_loss import ActorLossConfig
from terminal_agent.training.local.preset_sections import LocalPreset
from terminal_agent.training.preset_config import shown_input


def preset_field(key: str) -> FieldInfo:
    """The preset schema's field behind the dotted preset key ``key`` (``algorithm.lr``)."""
    model: type[BaseModel] = LocalPreset
    parts = key.split(".")
    for part in parts[:-1]:
        annotation = model.model_fields[part].annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        model = next(c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel))
    return model.model_fields[parts[-1]]


def preset_knob(key: str) -> Any:
    """A field of :class:`LocalTrainingConfig` that is the preset key ``key``, declared once there: its default
    (or default factory), its bounds and its docstring are the preset schema's."""
    info = preset_field(key)
    given: dict[str, Any] = ({"default_factory": info.default_factory} if info.default_factory is not None
                             else {"default": info.default})
    field: FieldInfo = Field(**given, description=info.description, json_schema_extra={"preset_key": key})
    field.metadata.extend(info.metadata)
    return field


def local_default(key: str, default: Any, why: str, **bounds: Any) -> Any:
    """A field of :class:`LocalTrainingConfig` that is the preset key ``key`` but has a default of its own, on
    purpose: ``why`` says why (the knob schema test lists these fields). A preset still sets it (``from_preset``)."""
    return Field(default, json_schema_extra={"preset_key": key, "local_default": why}, **bounds)


def converted_knob(key: str, how: str, **field: Any) -> Any:
    """A field of :class:`LocalTrainingConfig` computed from the preset key ``key`` (another type) as ``how`` says;
    ``field``: its ``default`` (or ``default_factory``) and bounds."""
    return Field(**field, json_schema_extra={"preset_key": key, "converted": how})


class LocalTrainingConfig(BaseModel):
    """Everything one local GRPO run needs, except the tasks and the run directory.

    A field that is a preset key is declared once, in the preset schema
    (:mod:`terminal_agent.training.preset_config`): :func:`preset_knob` takes its default, bounds
    and docstring from there. A field whose default here differs on purpose is a
    :func:`local_default`, each with the reason (a direct build, by tests, the experiment command
    and model loading, is a small quick run; a preset states a real run); a field computed from a
    preset key of another type is a :func:`converted_knob`. ``tests/training/test_knob_schema.py``
    holds the list of the differences.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True)

    # --- model ------------------------------------------------------------------------------
    model_path: str = local_default("model.path", "embedded", "model.path has no default (a preset names its model); "
                                    "a direct build runs the packaged model")
    """``embedded`` (the packaged SmolLM2-135M-Instruct) or a transformers model directory."""
    device: Literal["cpu", "cuda", "auto"] = preset_knob("local.device")
    dtype: Literal["float32", "bfloat16", "float16"] = preset_knob("local.dtype")
    lora_rank: int = preset_knob("local.lora.rank")
    lora_alpha: int = preset_knob("local.lora.alpha")
    lora_dropout: float = preset_knob("local.lora.dropout")
    lora_target_modules: list[str] = preset_knob("local.lora.target_modules")
    num_threads: int | None = preset_knob("local.num_threads")

    # --- rollouts ---------------------------------------------------------------------------
    group_size: int = local_default("rollout.n", 4, "a direct build is a small run (and may take groups of one, "
                                    "which the verl path's rollout.n >= 2 refuses)", ge=1)
    """Episodes per task in one step (the GRPO group, ``rollout.n``)."""
    tasks_per_step: int = local_default("batch.train_batch_size", 1, "batch.train_batch_size has no default (a preset "
                                        "states its batch); a direct build takes one task a step", ge=1)
    """Tasks per step (``batch.train_batch_size``)."""
    temperature: float = preset_knob("rollout.temperature")
    top_p: float = preset_knob("rollout.top_p")
    max_turns: int = local_default("agent.max_turns", 4, "a direct build is a small run on a small model", ge=1)
    """Model replies per episode; the episode is graded when they run out."""
    max_response_length_per_turn: int = local_default(
        "lengths.max_response_length_per_turn", 128, "the lengths have no preset default; a direct build (model "
        "loading asks for 1 token) may cap a reply below the preset's floor of 16", ge=1)
    """Token cap of one reply."""
    max_model_len: int = local_default("lengths.max_model_len", 2048, "the lengths have no preset default; the "
                                       "packaged model's context is 2048", ge=64)
    """Context of an episode (prompt + replies + observations); a turn that could not fit ends the episode, graded."""
    trajectory_timeout_s: float = local_default("agent.trajectory_timeout_s", 600.0, "a direct build's episodes "
                                                "are short (agent.max_turns 4)", gt=0)
    """Wall clock of one episode."""
    concurrency: int | None = local_default("agent.parallel_episodes", None, "64 episodes at once is a GPU cluster's "
                                            "number; a direct build runs one group at once", ge=1)
    """Episodes (containers) at once; ``None``: one group (``group_size``)."""
    sampler: Literal["auto", "continuous", "batched", "vllm"] = preset_knob("local.sampler")

    # --- algorithm --------------------------------------------------------------------------
    adv_estimator: str = preset_knob("algorithm.adv_estimator")
    norm_adv_by_std_in_grpo: bool = preset_knob("algorithm.norm_adv_by_std_in_grpo")
    lr: float = local_default("algorithm.lr", 1e-4, "the local trainer trains LoRA adapters; algorithm.lr's 1e-6 is "
                              "a full fine-tuning rate (the verl presets)", gt=0.0)
    """AdamW learning rate of the LoRA weights (a preset's ``algorithm.lr``)."""
    weight_decay: float = Field(0.01, ge=0.0)
    """AdamW weight decay (verl's default); not a preset key."""
    clip_ratio_low: float = preset_knob("algorithm.clip_ratio_low")
    clip_ratio_high: float = preset_knob("algorithm.clip_ratio_high")
    clip_ratio_c: float = preset_knob("algorithm.clip_ratio_c")
    loss_agg_mode: str = preset_knob("algorithm.loss_agg_mode")
    use_kl_loss: bool = preset_knob("algorithm.use_kl_loss")
    kl_loss_coef: float = preset_knob("algorithm.kl_loss_coef")
    kl_loss_type: str = preset_knob("algorithm.kl_loss_type")
    entropy_coeff: float = preset_knob("algorithm.entropy_coeff")
    grad_clip: float = preset_knob("algorithm.grad_clip")
    reject_zero_variance_groups: bool = preset_knob("algorithm.reject_zero_variance_groups")
    mask_truncated: bool = False
    """Truncation policy: False trains budget-cut episodes on their graded reward; True masks them; not a preset key."""
    micro_batch_tokens: int = preset_knob("local.micro_batch_tokens")
    stream_update: bool = preset_knob("local.stream_update")
    harbor_rollouts: RolloutTrialsConfig = preset_knob("trainer.harbor_rollouts")

    # --- loop -------------------------------------------------------------------------------
    steps: int = local_default("local.steps", 2, "a direct build is a small run", ge=1)
    """GRPO steps."""
    seed: int = preset_knob("local.seed")
    curriculum: Literal["none", "easy_to_hard"] = preset_knob("local.curriculum")
    curriculum_share: float = preset_knob("local.curriculum_share")
    save_freq: int = local_default("trainer.save_freq", 1, "a direct build is a run of a few steps", ge=-1)
    """Checkpoint every this many steps (-1: only at the end)."""
    keep_checkpoints: int | None = local_default("trainer.max_checkpoints_to_keep", 2, "a direct build checkpoints "
                                                 "every step (save_freq 1); two are enough to resume", ge=1)
    """Older checkpoints are deleted beyond this many; ``None`` keeps all."""
    wandb: bool = converted_knob("trainer.loggers", "whether trainer.loggers holds wandb", default=True)
    """Log to a wandb run (offline unless ``wandb_mode`` says otherwise)."""
    wandb_mode: Literal["offline", "online", "disabled"] = preset_knob("trainer.wandb_mode")
    project: str = preset_knob("trainer.project")
    experiment: str = converted_knob("trainer.experiment", "the preset's experiment (its name when unset)",
                                     default="local")
    """Experiment name (wandb)."""
    resume: bool = converted_knob("trainer.resume", "trainer.resume is not disable", default=True)
    """Continue from the run directory's latest checkpoint when there is one."""
    test_weight: float = preset_knob("reward.test_weight")
    judge_weight: float = preset_knob("reward.judge_weight")
    reward: RewardConfig | None = converted_knob("reward", "the preset's whole reward section", default=None)
    """The whole reward config (judge weight schedule included); None builds one from the two weights."""

    sandbox: SandboxConfig = converted_knob("sandbox", "sandbox.backend over sandbox.env.sandbox (sandbox_config_of)",
                                            default_factory=SandboxConfig)
    """Where episodes run: the sandbox backend (``docker``, ``bwrap``, ``ray``) and its settings; the
    SFT warm start, the GRPO rollouts and the learning experiment's evaluations all use it."""

    # --- validation on held-out tasks (terminal_agent.training.local.validation) --------------
    test_freq: int = local_default("trainer.test_freq", -1, "a direct build validates only when asked", ge=-1)
    """Validate every this many steps and after the last one (-1 or 0: never)."""
    val_before_train: bool = local_default("trainer.val_before_train", False, "a direct build validates only "
                                           "when asked")
    """Validate once before the first GRPO step (after the SFT warm start, when there is one)."""
    val_n: int = preset_knob("rollout.val_n")
    val_temperature: float = preset_knob("rollout.val_temperature")
    val_max_tasks: int | None = preset_knob("local.val_max_tasks")

    # --- SFT warm start ---------------------------------------------------------------------
    sft_enabled: bool = preset_knob("local.sft_warm_start.enabled")
    sft_epochs: int = preset_knob("local.sft_warm_start.epochs")
    sft_lr: float = preset_knob("local.sft_warm_start.lr")

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
    def from_preset(cls, preset: LocalPreset, **overrides: Any) -> "LocalTrainingConfig":
        """The config a ``backend: local`` :class:`~terminal_agent.training.preset_config.TrainingPreset` runs.

        The one place a preset becomes the local trainer's config: the launcher's dry run and the
        launch both call it. Refuses (ConfigError) a preset key the local trainer would ignore
        (:func:`local_preset_problems`) and a value it cannot run, naming the preset key
        (``algorithm.kl_loss_type``), or the keyword of ``overrides`` that was given.
        """
        from pydantic import ValidationError

        from terminal_agent.errors import ConfigError

        where = f" (in {_source_of(preset)})"
        problems = local_preset_problems(preset)
        if problems:
            raise ConfigError("; ".join(problems) + where)
        values: dict[str, Any] = {name: _preset_value(preset, key) for name, key in PRESET_KEY_OF_FIELD.items()}
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


def _source_of(preset: LocalPreset) -> str:
    """The file (or packaged preset) ``preset`` was read from, for messages."""
    return getattr(preset, "source", None) or f"preset {getattr(preset, 'name', '?')}"


def _declared_preset_key(info: FieldInfo) -> str | None:
    """The preset key a field's declaration names (its ``json_schema_extra["preset_key"]``), or None."""
    extra = info.json_schema_extra
    key = extra.get("preset_key") if isinstance(extra, dict) else None
    return key if isinstance(key, str) else None


#: The preset key behind each field of :class:`LocalTrainingConfig` that a preset sets (errors name it), read off
#: the fields' declarations (:func:`preset_knob`, :func:`local_default`, :func:`converted_knob`); fields not listed
#: (``weight_decay``, ``mask_truncated``) keep their defaults. ``sandbox`` comes from ``sandbox.backend`` and
#: ``sandbox.env.sandbox`` (:func:`sandbox_config_of`).
PRESET_KEY_OF_FIELD: dict[str, str] = {
    name: key for name, info in LocalTrainingConfig.model_fields.items()
    for key in [_declared_preset_key(info)] if key is not None and name != "sandbox"
}

#: Keys of ``sandbox.env`` the local trainer reads (the rest of an ``EnvConfig`` is the verl Workflow's).
LOCAL_SANDBOX_ENV_KEYS = ("sandbox", "sandbox_config")


def _preset_value(preset: Any, key: str) -> Any:
    value = preset
    for part in key.split("."):
        value = getattr(value, part)
    return value


def local_preset_problems(preset: LocalPreset) -> list[str]:
    """Why ``preset`` (``backend: local``) cannot run as written: each message names a preset key the
    local trainer cannot honour (one machine, one device, one optimizer step a step...). Empty when the preset runs as it reads."""
    problems: list[str] = []
    cluster, batch, trainer, data = preset.cluster, preset.batch, preset.trainer, preset.data
    if cluster.nodes > 1:
        problems.append(f"cluster.nodes: the local trainer runs on one machine, not {cluster.nodes}")
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


def sandbox_config_of(preset: LocalPreset) -> SandboxConfig:
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
    "LOCAL_SANDBOX_ENV_KEYS", "LocalTrainingConfig", "PRESET_KEY_OF_FIELD", "local_preset_problems",
    "sandbox_config_of",
]
