"""The local trainer's own typed settings, flat, and how a :class:`TrainingPreset` maps onto them.

The trainer reads only :class:`LocalTrainingConfig`; :meth:`LocalTrainingConfig.from_preset` is
the one place that knows the preset's section layout (``rollout.n``, ``algorithm.*``,
``local.lora.*``...). Tests and the experiment command build the config directly.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.sandbox.config import SandboxConfig

from terminal_agent.training.algorithms.policy_loss import LOSS_AGG_MODES, ActorLossConfig


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

    # --- algorithm --------------------------------------------------------------------------
    adv_estimator: str = "grpo"
    """Name in :data:`terminal_agent.training.algorithms.ADVANTAGE_ESTIMATORS`."""
    norm_adv_by_std_in_grpo: bool = True
    """Divide by the group's std."""
    lr: float = Field(1e-4, gt=0.0)
    """AdamW learning rate of the LoRA weights."""
    weight_decay: float = Field(0.01, ge=0.0)
    """AdamW weight decay (verl's default)."""
    clip_ratio_low: float = Field(0.2, ge=0.0)
    clip_ratio_high: float = Field(0.28, ge=0.0)
    clip_ratio_c: float = Field(3.0, gt=1.0)
    loss_agg_mode: Literal[LOSS_AGG_MODES] = "token-mean"  # type: ignore[valid-type]
    """verl's name of how token losses become one loss."""
    use_kl_loss: bool = False
    """KL(policy || base) term; the reference is the model with its adapter disabled."""
    kl_loss_coef: float = Field(0.001, ge=0.0)
    kl_loss_type: Literal["low_var_kl", "k3"] = "low_var_kl"
    entropy_coeff: float = Field(0.0, ge=0.0)
    grad_clip: float = Field(1.0, gt=0.0)
    """Max gradient norm; a non-finite norm skips the optimizer step (as verl does)."""
    reject_zero_variance_groups: bool = True
    """Drop groups whose rewards all agree."""
    mask_truncated: bool = False
    """Truncation policy: False trains budget-cut episodes on their graded reward; True masks them."""
    micro_batch_tokens: int = Field(4096, ge=64)
    """Token budget of one forward/backward (gradient accumulation is exact across micro-batches)."""

    # --- loop -------------------------------------------------------------------------------
    steps: int = Field(2, ge=1)
    """GRPO steps."""
    seed: int = 0
    """Seed of data order, sampling and LoRA init."""
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

    # --- SFT warm start ---------------------------------------------------------------------
    sft_enabled: bool = False
    """Run a supervised warm start on reference-solution transcripts of the train tasks first."""
    sft_epochs: int = Field(1, ge=1)
    sft_lr: float = Field(1e-4, gt=0.0)

    @model_validator(mode="after")
    def _check(self) -> "LocalTrainingConfig":
        from terminal_agent.training.algorithms.advantages import ADVANTAGE_ESTIMATORS

        ADVANTAGE_ESTIMATORS.get(self.adv_estimator)  # unknown names raise, listing the valid ones
        return self

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

    @classmethod
    def from_preset(cls, preset: Any, **overrides: Any) -> "LocalTrainingConfig":
        """Map a ``terminal_agent.training.preset_config.TrainingPreset`` (backend local) onto this config."""
        local = preset.local
        if local is None:
            from terminal_agent.errors import ConfigError

            raise ConfigError(f"preset {preset.name!r} has no 'local' section (backend {preset.backend!r})")
        algo, trainer = preset.algorithm, preset.trainer
        values: dict[str, Any] = dict(
            model_path=preset.model.path,
            device=local.device,
            dtype=local.dtype,
            lora_rank=local.lora.rank,
            lora_alpha=local.lora.alpha,
            lora_dropout=local.lora.dropout,
            lora_target_modules=list(local.lora.target_modules),
            num_threads=local.num_threads,
            concurrency=preset.agent.parallel_episodes,
            group_size=preset.rollout.n,
            tasks_per_step=preset.batch.train_batch_size,
            temperature=preset.rollout.temperature,
            top_p=preset.rollout.top_p,
            max_turns=preset.agent.max_turns,
            max_response_length_per_turn=preset.lengths.max_response_length_per_turn,
            max_model_len=preset.lengths.max_model_len,
            trajectory_timeout_s=preset.agent.trajectory_timeout_s,
            adv_estimator=algo.adv_estimator,
            norm_adv_by_std_in_grpo=algo.norm_adv_by_std_in_grpo,
            lr=algo.lr,
            clip_ratio_low=algo.clip_ratio_low,
            clip_ratio_high=algo.clip_ratio_high,
            clip_ratio_c=algo.clip_ratio_c,
            loss_agg_mode=algo.loss_agg_mode,
            use_kl_loss=algo.use_kl_loss,
            kl_loss_coef=algo.kl_loss_coef,
            kl_loss_type=algo.kl_loss_type,
            entropy_coeff=algo.entropy_coeff,
            grad_clip=algo.grad_clip,
            reject_zero_variance_groups=algo.reject_zero_variance_groups,
            steps=local.steps,
            save_freq=trainer.save_freq,
            keep_checkpoints=getattr(trainer, "max_checkpoints_to_keep", None) or 2,
            wandb="wandb" in list(trainer.loggers),
            wandb_mode=getattr(trainer, "wandb_mode", "offline"),
            project=getattr(trainer, "project", "terminal-agent"),
            experiment=getattr(preset, "experiment", None) or preset.name,
            resume=getattr(trainer, "resume", "auto") != "disable",
            test_weight=preset.reward.test_weight,
            judge_weight=preset.reward.judge_weight,
            reward=preset.reward,
            sft_enabled=local.sft_warm_start.enabled,
            sft_epochs=local.sft_warm_start.epochs,
            sft_lr=local.sft_warm_start.lr,
            sandbox=sandbox_config_of(preset),
        )
        values.update(overrides)
        return cls(**values)


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
        raise ConfigError(f"preset sandbox settings: {exc}") from exc


__all__ = ["LocalTrainingConfig", "sandbox_config_of"]
