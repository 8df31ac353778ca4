"""The local trainer's own typed settings: its section plus the episode spec, and how a :class:`LocalPreset`
becomes them.

The trainer reads only :class:`LocalTrainingConfig`. :meth:`LocalTrainingConfig.from_preset` builds it
from a ``backend: local`` preset, in the plan (the launch runs that very config): the trainer's own fields
from the ``local`` section and the common sections the local trainer reads, field by field, and what each
episode is built from as the preset's :class:`~terminal_agent.rollout.episode_spec.EpisodeSpec` (its only
home: turns, reply cap, context, timeout, reward and sandbox are no fields here). A key of another backend is
no key of a :class:`LocalPreset` at all; a value the local trainer cannot run is refused by
:func:`local_preset_problems`, naming the preset key. Tests, benchmarks and the experiment command build the
config directly: its defaults are those of a small quick run (the episode spec :meth:`EpisodeSpec.small`), so
a few of them differ from a preset's on purpose (each field's docstring says so).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terminal_agent.harbor_jobs.training_trials import RolloutTrialsConfig
from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.training.algorithms.advantages import ADVANTAGE_ESTIMATORS
from terminal_agent.training.algorithms.kl_penalty import KL_ESTIMATORS
from terminal_agent.training.algorithms.loss_aggregation import LOSS_AGG_MODES
from terminal_agent.training.algorithms.policy_loss import ActorLossConfig
from terminal_agent.training.local.preset_sections import LocalPreset, local_preset
from terminal_agent.training.preset_config import shown_input


class LocalTrainingConfig(BaseModel):
    """Everything one local GRPO run needs, except the tasks and the run directory. Each field names the preset
    key it comes from (:meth:`from_preset`); "a direct build" is a config built without a preset."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True)

    # --- model ------------------------------------------------------------------------------
    model_path: str = "embedded"
    """``model.path``: ``embedded`` (the packaged SmolLM2-135M-Instruct, also a direct build's) or a transformers
    model directory."""
    device: Literal["cpu", "cuda", "auto"] = "auto"
    """``local.device``: where the policy runs; ``auto`` picks CUDA when available."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """``local.dtype``: the weights' dtype (LoRA weights train in it too)."""
    lora_rank: int = Field(8, ge=1)
    """``local.lora.rank``."""
    lora_alpha: int = Field(16, ge=1)
    """``local.lora.alpha``."""
    lora_dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """``local.lora.dropout`` (off while sampling: the policy samples in eval mode)."""
    lora_target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])
    """``local.lora.target_modules``: module names that get adapters."""
    num_threads: int | None = Field(None, ge=1)
    """``local.num_threads``: torch CPU threads; None = torch's default."""

    # --- rollouts ---------------------------------------------------------------------------
    group_size: int = Field(4, ge=1)
    """``rollout.n``: episodes per task in one step (the GRPO group). A direct build is a small run and may take
    groups of one, which a preset's ``rollout.n >= 2`` refuses."""
    tasks_per_step: int = Field(1, ge=1)
    """``batch.train_batch_size``: tasks per step (a direct build takes one)."""
    temperature: float = Field(1.0, gt=0.0)
    """``rollout.temperature``: sampling temperature while training (the logprobs are taken at it too)."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """``rollout.top_p``: nucleus sampling while training."""
    episode: EpisodeSpec = Field(default_factory=EpisodeSpec.small, exclude=True)
    """What each episode is built from and bounded by: the preset's episode spec (:meth:`EpisodeSpec.from_preset`:
    ``sandbox.env`` whole with ``sandbox.backend``, ``reward``, ``agent.max_turns``, ``agent.trajectory_timeout_s``,
    ``agent.compaction`` and the ``lengths``); the rollouts, the SFT warm start and the learning experiment's
    evaluations build their envs, agents, engine settings and deadlines from it, and the run's leak sweep and judge
    schedule read its sandbox and reward. A direct build: :meth:`EpisodeSpec.small` (4 turns of 128 tokens in a
    2048-token context, 600 s, the tests alone, the default sandbox; a small run on a small model). Not in the
    config's dump: the dry run shows it as ``workflow_args``."""
    concurrency: int | None = Field(None, ge=1)
    """``agent.parallel_episodes``: episodes (containers) at once; ``None`` (a direct build): one group
    (``group_size``)."""
    sampler: Literal["auto", "continuous", "batched", "vllm"] = "auto"
    """``local.sampler``: what samples the policy (docs/models.md)."""

    # --- algorithm --------------------------------------------------------------------------
    adv_estimator: str = "grpo"
    """``algorithm.adv_estimator``: a name in ``ADVANTAGE_ESTIMATORS``."""
    norm_adv_by_std_in_grpo: bool = True
    """``algorithm.norm_adv_by_std_in_grpo``: divide the group-centred reward by the group's standard deviation."""
    lr: float = Field(1e-4, gt=0.0)
    """``algorithm.lr``: AdamW learning rate of the LoRA weights (a direct build: a LoRA rate; a preset's default
    1e-6 is a full fine-tuning rate, and the local presets set 1e-5)."""
    weight_decay: float = Field(0.01, ge=0.0)
    """AdamW weight decay (verl's default); not a preset key."""
    clip_ratio_low: float = Field(0.2, ge=0.0)
    """``algorithm.clip_ratio_low``: PPO clip below 1 (ratio floor 1 - low)."""
    clip_ratio_high: float = Field(0.28, ge=0.0)
    """``algorithm.clip_ratio_high``: PPO clip above 1 (ratio ceiling 1 + high)."""
    clip_ratio_c: float = Field(3.0, gt=1.0)
    """``algorithm.clip_ratio_c``: dual-clip bound for negative advantages."""
    loss_agg_mode: str = "token-mean"
    """``algorithm.loss_agg_mode``: a name in ``LOSS_AGG_MODES``."""
    use_kl_loss: bool = False
    """``algorithm.use_kl_loss``: add a KL(policy || reference) term (the reference is the model with its adapter
    disabled)."""
    kl_loss_coef: float = Field(0.001, ge=0.0)
    """``algorithm.kl_loss_coef``: weight of the KL term."""
    kl_loss_type: str = "low_var_kl"
    """``algorithm.kl_loss_type``: a name in ``KL_ESTIMATORS``."""
    entropy_coeff: float = Field(0.0, ge=0.0)
    """``algorithm.entropy_coeff``: entropy bonus weight (0 = none)."""
    grad_clip: float = Field(1.0, gt=0.0)
    """``algorithm.grad_clip``: gradient norm clip; a non-finite norm skips the optimizer step."""
    reject_zero_variance_groups: bool = True
    """``algorithm.reject_zero_variance_groups``: drop groups whose episodes all got the same reward."""
    mask_truncated: bool = False
    """Truncation policy: False trains budget-cut episodes on their graded reward; True masks them; not a preset key."""
    micro_batch_tokens: int = Field(4096, ge=64)
    """``local.micro_batch_tokens``: token budget of one forward and backward pass of the update."""
    stream_update: bool = True
    """``local.stream_update``: start each graded group's update while the step's other episodes still run."""
    harbor_rollouts: RolloutTrialsConfig = Field(default_factory=RolloutTrialsConfig)
    """``trainer.harbor_rollouts``: which steps' episodes are kept as Harbor trials in ``RUN/rollouts/``."""

    # --- loop -------------------------------------------------------------------------------
    steps: int = Field(2, ge=1)
    """``local.steps``: GRPO steps (a direct build: a small run)."""
    seed: int = 0
    """``local.seed``: seed of the data order, the sampling and the LoRA init."""
    curriculum: Literal["none", "easy_to_hard"] = "none"
    """``local.curriculum``: train-task order (``easy_to_hard`` opens the levels one by one)."""
    curriculum_share: float = Field(0.5, gt=0.0, le=1.0)
    """``local.curriculum_share``: share of the steps over which ``easy_to_hard`` opens the harder levels."""
    save_freq: int = Field(1, ge=-1)
    """``trainer.save_freq``: checkpoint every this many steps (-1: only at the end; a direct build: every step)."""
    keep_checkpoints: int | None = Field(2, ge=1)
    """``trainer.max_checkpoints_to_keep``: older checkpoints are deleted beyond this many; ``None`` keeps all (a
    direct build checkpoints every step: two are enough to resume)."""
    wandb: bool = True
    """Whether ``trainer.loggers`` holds ``wandb``: log to a wandb run (offline unless ``wandb_mode`` says so)."""
    wandb_mode: Literal["offline", "online", "disabled"] = "offline"
    """``trainer.wandb_mode``."""
    project: str = "terminal-agent"
    """``trainer.project``: project name (wandb)."""
    experiment: str = "local"
    """The preset's experiment (``trainer.experiment``, else its name): the wandb run's name."""
    resume: bool = True
    """Whether ``trainer.resume`` is ``auto``: continue from the run directory's latest checkpoint when there is one."""

    # --- validation on held-out tasks (terminal_agent.training.local.validation) --------------
    test_freq: int = Field(-1, ge=-1)
    """``trainer.test_freq``: validate every this many steps and after the last one (-1 or 0, a direct build's:
    never)."""
    val_before_train: bool = False
    """``trainer.val_before_train``: validate once before the first GRPO step (a direct build: only when asked)."""
    val_n: int = Field(1, ge=1)
    """``rollout.val_n``: episodes per validation task."""
    val_temperature: float = Field(0.6, gt=0.0)
    """``rollout.val_temperature``: sampling temperature of validation episodes."""
    val_max_tasks: int | None = Field(None, ge=1)
    """``local.val_max_tasks``: held-out tasks of one validation pass (the same sample every pass); None: all."""

    # --- SFT warm start ---------------------------------------------------------------------
    sft_enabled: bool = False
    """``local.sft_warm_start.enabled``."""
    sft_epochs: int = Field(1, ge=1)
    """``local.sft_warm_start.epochs``: passes over the solution transcripts."""
    sft_lr: float = Field(1e-4, gt=0.0)
    """``local.sft_warm_start.lr``: learning rate of the warm start."""

    @field_validator("episode")
    @classmethod
    def _capped_replies(cls, spec: EpisodeSpec) -> EpisodeSpec:
        if spec.max_tokens_per_turn is None:
            raise ValueError("the local trainer's samplers cap every reply: the episode spec needs max_tokens_per_turn "
                             "(preset lengths.max_response_length_per_turn)")
        return spec

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

    @property
    def max_tokens_per_turn(self) -> int:
        """The episode spec's reply cap (``lengths.max_response_length_per_turn``), the samplers' default
        ``max_new_tokens``; a local config always has one (its validator)."""
        cap = self.episode.max_tokens_per_turn
        assert cap is not None  # _capped_replies refused a spec without one
        return cap

    def run_record(self) -> dict[str, Any]:
        """What a run records of its config (wandb's config, the seed experiment's ``experiment.json``): the
        dump, and the episode spec as the Workflow's arguments (:meth:`EpisodeSpec.to_workflow_args`)."""
        return {**self.model_dump(mode="json"), "episode": self.episode.to_workflow_args()}

    @property
    def validates(self) -> bool:
        """Whether the run asks for validation at all (before training or every ``test_freq`` steps)."""
        return self.val_before_train or self.test_freq > 0

    @classmethod
    def from_preset(cls, preset: Any, **overrides: Any) -> "LocalTrainingConfig":
        """The config a ``backend: local`` preset runs, each field from its preset key; ``overrides`` set fields.

        The launcher's plan calls it once and the launch runs its result. Refuses (ConfigError) a preset of
        another backend, a value the local trainer cannot run (:func:`local_preset_problems`, naming the preset
        key) and a bad keyword of ``overrides`` (naming it).
        """
        from pydantic import ValidationError

        from terminal_agent.errors import ConfigError

        preset = local_preset(preset)
        where = f" (in {_source_of(preset)})"
        problems = local_preset_problems(preset)
        if problems:
            raise ConfigError("; ".join(problems) + where)
        if "episode" in overrides:
            raise ConfigError(f"episode: the preset's episode spec (sandbox, reward, agent and lengths); set its "
                              f"preset keys instead{where}")
        try:
            spec = EpisodeSpec.from_preset(preset)
        except ConfigError as exc:
            raise ConfigError(f"{exc}{where}") from None
        local, rollout, algorithm, trainer = preset.local, preset.rollout, preset.algorithm, preset.trainer
        values: dict[str, Any] = dict(
            model_path=preset.model.path, device=local.device, dtype=local.dtype, lora_rank=local.lora.rank,
            lora_alpha=local.lora.alpha, lora_dropout=local.lora.dropout,
            lora_target_modules=list(local.lora.target_modules), num_threads=local.num_threads,
            group_size=rollout.n, tasks_per_step=preset.batch.train_batch_size, temperature=rollout.temperature,
            top_p=rollout.top_p, episode=spec, concurrency=preset.agent.parallel_episodes, sampler=local.sampler,
            adv_estimator=algorithm.adv_estimator, norm_adv_by_std_in_grpo=algorithm.norm_adv_by_std_in_grpo,
            lr=algorithm.lr, clip_ratio_low=algorithm.clip_ratio_low, clip_ratio_high=algorithm.clip_ratio_high,
            clip_ratio_c=algorithm.clip_ratio_c, loss_agg_mode=algorithm.loss_agg_mode,
            use_kl_loss=algorithm.use_kl_loss, kl_loss_coef=algorithm.kl_loss_coef,
            kl_loss_type=algorithm.kl_loss_type, entropy_coeff=algorithm.entropy_coeff,
            grad_clip=algorithm.grad_clip, reject_zero_variance_groups=algorithm.reject_zero_variance_groups,
            micro_batch_tokens=local.micro_batch_tokens, stream_update=local.stream_update,
            harbor_rollouts=trainer.harbor_rollouts, steps=local.steps, seed=local.seed,
            curriculum=local.curriculum, curriculum_share=local.curriculum_share, save_freq=trainer.save_freq,
            keep_checkpoints=trainer.max_checkpoints_to_keep, wandb="wandb" in trainer.loggers,
            wandb_mode=trainer.wandb_mode, project=trainer.project, experiment=preset.experiment,
            resume=trainer.resume != "disable", test_freq=trainer.test_freq,
            val_before_train=trainer.val_before_train, val_n=rollout.val_n,
            val_temperature=rollout.val_temperature, val_max_tasks=local.val_max_tasks,
            sft_enabled=local.sft_warm_start.enabled, sft_epochs=local.sft_warm_start.epochs,
            sft_lr=local.sft_warm_start.lr,
        )
        try:
            config = cls(**{**values, **overrides})
        except ValidationError as exc:  # the preset's sections hold the same bounds: an override is wrong
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first.get("loc") else f"preset {preset.name!r}"
            shown = (f" (got {shown_input(first['input'])})"
                     if "input" in first and not isinstance(first["input"], dict) else "")
            message = str(first.get("msg", exc)).removeprefix("Value error, ")
            raise ConfigError(f"{field}: {message} for the local trainer{shown}{where}") from None
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


def local_preset_problems(preset: LocalPreset) -> list[str]:
    """Why ``preset`` (``backend: local``) cannot run as written: each message names a preset key whose value the
    local trainer cannot honour (one machine, one device, one optimizer step a step, the losses and KL estimators
    it implements...). Empty when the preset runs as it reads."""
    problems: list[str] = []
    algorithm = preset.algorithm
    if algorithm.loss_agg_mode not in LOSS_AGG_MODES:
        problems.append(f"algorithm.loss_agg_mode: {algorithm.loss_agg_mode!r} is no loss aggregation mode of the local "
                        f"trainer; valid: {', '.join(LOSS_AGG_MODES.names())}")
    if algorithm.kl_loss_type not in KL_ESTIMATORS:
        problems.append(f"algorithm.kl_loss_type: {algorithm.kl_loss_type!r} is no KL estimator of the local trainer; "
                        f"valid: {', '.join(KL_ESTIMATORS.names())}")
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
    if preset.sandbox.env.get("run_id") is not None:
        problems.append("sandbox.env.run_id: the local trainer labels its sandboxes with its own run id (its leak "
                        "sweep and cleanup are scoped to it)")
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


__all__ = ["LocalTrainingConfig", "local_preset_problems"]
