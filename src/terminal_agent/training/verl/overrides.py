"""A preset as rLLM/verl hydra keys, the raw hydra keys of a command line, and the arguments our Workflow gets.

:func:`verl_overrides` is the one place that knows which verl 0.9.1 / rLLM key a preset field
becomes. Each entry remembers the preset key it came from, so a key the schema rejects is
reported against the preset key the user can change. The keys are composed against rLLM's
``agent_ppo_trainer`` config (which loads verl's ``ppo_trainer``) by
:mod:`terminal_agent.training.verl.schema`; each must already exist there, except the few marked
``add`` (a ``+key``: a name inside a free mapping such as ``model.override_config``).

:func:`split_overrides` tells the preset keys of a command line from raw rLLM/verl keys:

* ``+key=value`` and ``++key=value`` are raw (hydra additions);
* a key whose whole dotted path is a preset key (``rollout.n``, ``trainer.save_freq``,
  ``sandbox.env.sandbox.bwrap.images_dir``) is a preset key, also where verl has the same path;
* a key in a section only the preset has (``model``, ``cluster``, ``rollout``, ``batch``, ...) is a
  preset key (an unknown one is refused, naming it);
* anything else is raw: a verl/rLLM-only section (``actor_rollout_ref``, ``critic``, ``rllm``,
  ``ray_kwargs``, ...) or a path of a section both have (``data``, ``algorithm``, ``trainer``,
  ``reward``) that the preset does not have (``trainer.logger``, ``algorithm.use_kl_in_reward``).

A path that is both a preset key and a verl key is ambiguous unless the preset maps it onto that
very verl key with the same value (``trainer.save_freq``); the launcher refuses an ambiguous one
by name. A raw key may not change a hydra key the preset maps (the preset key is the one to change).

Lengths: verl pads an episode to ``data.max_prompt_length`` (the first prompt) plus
``data.max_response_length`` (everything after it: replies and observations), and vLLM's
``rollout.max_model_len`` is the whole context. So ``max_response_length`` is the context minus
the first prompt, and the per-turn reply cap goes to the Workflow, which passes it as
``max_tokens`` on each model call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from terminal_agent.errors import ConfigError
from terminal_agent.training.launch_plan import RawOverride
from terminal_agent.training.preset_config import is_preset_key, preset_class
from terminal_agent.training.trainer_registry import TRAINER_BACKENDS
from terminal_agent.training.verl.preset_sections import VerlPreset
from terminal_agent.training.verl.attention_names import PACKED_ATTENTION_MODULE, PACKED_ATTENTION_NAME

#: rLLM's trainer config that HEAD's ``AgentTrainer(backend="verl")`` runs (rllm/trainer/config).
RLLM_TRAINER_CONFIG = "agent_ppo_trainer"


@dataclass(frozen=True)
class HydraOverride:
    """One hydra key set from one preset key."""

    key: str
    """Dotted key of the composed rLLM/verl config."""
    value: Any
    """Its value (bool, int, float, str, None or a list of those)."""
    source: str
    """The preset key it comes from (what an error tells the user to change)."""
    origin: Literal["preset", "mapping"] = "preset"
    """``preset``: the value of the preset key ``source``; ``mapping``: a value the project fixes (``source`` is
    the preset key that governs it)."""
    add: bool = False
    """A name the schema does not declare, added inside a free mapping (``+key=value``)."""

    def to_hydra(self) -> str:
        """``key=value`` (``+key=value`` for an addition) in Hydra's override grammar."""
        return f"{'+' if self.add else ''}{self.key}={format_hydra_value(self.value)}"


#: Top-level sections that the preset and rLLM/verl's config both have: a path in them that is not a preset key
#: is a raw hydra key (checked against the composed schema by the tests).
SHARED_SECTIONS = ("data", "algorithm", "trainer", "reward")


def split_overrides(overrides: list[str]) -> tuple[list[str], list[RawOverride]]:
    """The command line's ``key=value`` words as (preset overrides, raw rLLM/verl overrides); the rule is in
    the module's docstring. Raises :class:`ConfigError` naming a word that is no override."""
    preset: list[str] = []
    raw: list[RawOverride] = []
    preset_types = [preset_class(name) for name in TRAINER_BACKENDS.names()]  # a key of any backend's preset
    for text in overrides:
        stripped = text.strip()
        if stripped.startswith("~"):
            raise ConfigError(f"override {text!r}: deleting a hydra key (~key) is not supported")
        prefix: Literal["", "+", "++"] = "++" if stripped.startswith("++") else "+" if stripped.startswith("+") else ""
        key, sep, value = stripped[len(prefix):].partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"override {text!r} is not key=value (e.g. rollout.n=16 or "
                              "actor_rollout_ref.rollout.enforce_eager=true)")
        parts = key.split(".")
        if prefix:
            raw.append(RawOverride(text, key, prefix, value))
        elif any(is_preset_key(parts, preset_type) or (parts[0] in preset_type.model_fields
                                                       and parts[0] not in SHARED_SECTIONS)
                 for preset_type in preset_types):
            preset.append(text)
        else:
            raw.append(RawOverride(text, key, prefix, value))
    return preset, raw


def format_hydra_value(value: Any) -> str:
    """A Python value as a Hydra override value (strings quoted, so ``a,b`` or ``1e-6`` stay strings)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(format_hydra_value(item) for item in value) + "]"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def verl_overrides(preset: VerlPreset, *, train_files: str, val_files: str | None,
                   model_path: str | None = None) -> list[HydraOverride]:
    """Every rLLM/verl key the preset sets, in a stable order. ``model_path``: where ``model.path`` resolved to
    (the embedded model's directory); None: ``model.path`` as written."""
    out: list[HydraOverride] = []

    def put(key: str, value: Any, source: str) -> None:
        out.append(HydraOverride(key, value, source))

    def fixed(key: str, value: Any, governed_by: str) -> None:
        out.append(HydraOverride(key, value, governed_by, origin="mapping"))

    arr = "actor_rollout_ref"
    actor, rollout, ref, model = f"{arr}.actor", f"{arr}.rollout", f"{arr}.ref", f"{arr}.model"
    lengths, batch, algo = preset.lengths, preset.batch, preset.algorithm
    log_prob_micro = batch.log_prob_micro_batch_size_per_gpu or batch.micro_batch_size_per_gpu

    # data
    data_source = "data.train_files" if preset.data.train_files else "data.tasks"
    put("data.train_files", train_files, data_source)
    put("data.val_files", val_files if val_files is not None else train_files,
        "data.val_files" if preset.data.val_files else data_source)
    put("data.train_batch_size", batch.train_batch_size, "batch.train_batch_size")
    put("data.seed", preset.data.seed, "data.seed")
    put("data.max_prompt_length", lengths.max_prompt_length, "lengths.max_prompt_length")
    put("data.max_response_length", lengths.trajectory_response_length, "lengths.max_model_len")
    fixed("data.filter_overlong_prompts", True, "lengths.max_prompt_length")
    put("data.trust_remote_code", preset.model.trust_remote_code, "model.trust_remote_code")

    # model
    put(f"{model}.path", model_path or preset.model.path, "model.path")
    put(f"{model}.lora_rank", preset.model.lora_rank, "model.lora_rank")
    put(f"{model}.lora_alpha", preset.model.lora_alpha, "model.lora_alpha")
    put(f"{model}.enable_gradient_checkpointing", preset.model.gradient_checkpointing, "model.gradient_checkpointing")
    put(f"{model}.use_remove_padding", preset.model.use_remove_padding, "model.use_remove_padding")
    put(f"{model}.use_fused_kernels", preset.model.fused_kernels != "off", "model.fused_kernels")
    if preset.model.fused_kernels != "off":
        put(f"{model}.fused_kernel_options.impl_backend", preset.model.fused_kernels, "model.fused_kernels")
    put(f"{model}.trust_remote_code", preset.model.trust_remote_code, "model.trust_remote_code")
    if preset.model.attn_implementation is not None:  # verl reads it from the model's config overrides
        out.append(HydraOverride(f"{model}.override_config.attn_implementation", preset.model.attn_implementation,
                                 "model.attn_implementation", add=True))
    if preset.model.attn_implementation == PACKED_ATTENTION_NAME:  # every worker registers it before loading
        fixed(f"{model}.external_lib", PACKED_ATTENTION_MODULE, "model.attn_implementation")

    # algorithm (GRPO; no critic, no KL in the reward)
    put("algorithm.adv_estimator", algo.adv_estimator, "algorithm.adv_estimator")
    put("algorithm.norm_adv_by_std_in_grpo", algo.norm_adv_by_std_in_grpo, "algorithm.norm_adv_by_std_in_grpo")
    fixed("algorithm.use_kl_in_reward", False, "algorithm.use_kl_loss")
    put("algorithm.rollout_correction.bypass_mode", algo.old_log_probs == "sampler", "algorithm.old_log_probs")
    fixed("critic.enable", False, "algorithm.adv_estimator")

    # actor
    put(f"{actor}.optim.lr", algo.lr, "algorithm.lr")
    # verl 0.9.1's engine path reads optim.clip_grad; actor.grad_clip (legacy workers) gets the same value
    put(f"{actor}.optim.clip_grad", algo.grad_clip, "algorithm.grad_clip")
    put(f"{actor}.grad_clip", algo.grad_clip, "algorithm.grad_clip")
    put(f"{actor}.ppo_mini_batch_size", batch.ppo_mini_batch_size, "batch.ppo_mini_batch_size")
    put(f"{actor}.ppo_micro_batch_size_per_gpu", batch.micro_batch_size_per_gpu, "batch.micro_batch_size_per_gpu")
    dynamic = batch.max_tokens_per_gpu is not None
    put(f"{actor}.use_dynamic_bsz", dynamic, "batch.max_tokens_per_gpu")
    if batch.max_tokens_per_gpu is not None:  # verl requires the actor's and the log-prob passes' modes to agree
        put(f"{actor}.ppo_max_token_len_per_gpu", batch.max_tokens_per_gpu, "batch.max_tokens_per_gpu")
        for role in (rollout, ref):
            put(f"{role}.log_prob_use_dynamic_bsz", True, "batch.max_tokens_per_gpu")
            put(f"{role}.log_prob_max_token_len_per_gpu", 2 * batch.max_tokens_per_gpu, "batch.max_tokens_per_gpu")
    put(f"{actor}.clip_ratio_low", algo.clip_ratio_low, "algorithm.clip_ratio_low")
    put(f"{actor}.clip_ratio_high", algo.clip_ratio_high, "algorithm.clip_ratio_high")
    put(f"{actor}.clip_ratio_c", algo.clip_ratio_c, "algorithm.clip_ratio_c")
    put(f"{actor}.loss_agg_mode", algo.loss_agg_mode, "algorithm.loss_agg_mode")
    put(f"{actor}.use_kl_loss", algo.use_kl_loss, "algorithm.use_kl_loss")
    put(f"{actor}.kl_loss_coef", algo.kl_loss_coef, "algorithm.kl_loss_coef")
    put(f"{actor}.kl_loss_type", algo.kl_loss_type, "algorithm.kl_loss_type")
    put(f"{actor}.entropy_coeff", algo.entropy_coeff, "algorithm.entropy_coeff")
    put(f"{actor}.ulysses_sequence_parallel_size", preset.parallel.sequence_parallel, "parallel.sequence_parallel")
    put(f"{actor}.fsdp_config.param_offload", preset.offload.param, "offload.param")
    put(f"{actor}.fsdp_config.optimizer_offload", preset.offload.optimizer, "offload.optimizer")

    # reference policy (used only with the KL loss)
    put(f"{ref}.fsdp_config.param_offload", preset.offload.param, "offload.param")
    put(f"{ref}.log_prob_micro_batch_size_per_gpu", log_prob_micro, "batch.log_prob_micro_batch_size_per_gpu")

    # rollout (vLLM, async: what rLLM's workflow trainer requires)
    fixed(f"{rollout}.name", "vllm", "backend")
    fixed(f"{rollout}.mode", "async", "backend")
    put(f"{rollout}.n", preset.rollout.n, "rollout.n")
    put(f"{rollout}.temperature", preset.rollout.temperature, "rollout.temperature")
    put(f"{rollout}.top_p", preset.rollout.top_p, "rollout.top_p")
    put(f"{rollout}.tensor_model_parallel_size", preset.parallel.tensor_parallel, "parallel.tensor_parallel")
    put(f"{rollout}.gpu_memory_utilization", preset.rollout.gpu_memory_utilization, "rollout.gpu_memory_utilization")
    put(f"{rollout}.max_model_len", lengths.max_model_len, "lengths.max_model_len")
    put(f"{rollout}.enforce_eager", preset.rollout.enforce_eager, "rollout.enforce_eager")
    put(f"{rollout}.log_prob_micro_batch_size_per_gpu", log_prob_micro, "batch.log_prob_micro_batch_size_per_gpu")
    fixed(f"{rollout}.calculate_log_probs", True, "backend")
    put(f"{rollout}.val_kwargs.n", preset.rollout.val_n, "rollout.val_n")
    put(f"{rollout}.val_kwargs.temperature", preset.rollout.val_temperature, "rollout.val_temperature")
    put(f"{rollout}.val_kwargs.top_p", preset.rollout.top_p, "rollout.top_p")
    fixed(f"{rollout}.val_kwargs.do_sample", True, "rollout.val_temperature")
    if preset.model.lora_rank > 0:
        fixed(f"{rollout}.load_format", "safetensors", "model.lora_rank")  # LoRA weights are synced as tensors

    # trainer
    trainer = preset.trainer
    put("trainer.nnodes", preset.cluster.nodes, "cluster.nodes")
    put("trainer.n_gpus_per_node", preset.cluster.gpus_per_node, "cluster.gpus_per_node")
    put("trainer.total_epochs", trainer.total_epochs, "trainer.total_epochs")
    put("trainer.total_training_steps", trainer.total_training_steps, "trainer.total_training_steps")
    put("trainer.save_freq", trainer.save_freq, "trainer.save_freq")
    put("trainer.test_freq", trainer.test_freq, "trainer.test_freq")
    put("trainer.val_before_train", trainer.val_before_train, "trainer.val_before_train")
    put("trainer.logger", list(trainer.loggers), "trainer.loggers")
    put("trainer.project_name", trainer.project, "trainer.project")
    put("trainer.experiment_name", preset.experiment, "trainer.experiment")
    put("trainer.default_local_dir", str(preset.run_dir / "checkpoints"), "trainer.output_dir")
    put("trainer.resume_mode", trainer.resume, "trainer.resume")
    put("trainer.resume_from_path", trainer.resume_from_path, "trainer.resume_from_path")
    put("trainer.max_actor_ckpt_to_keep", trainer.max_checkpoints_to_keep, "trainer.max_checkpoints_to_keep")

    # rLLM: the agent loop, the workflow engine, filtering
    agent = preset.agent
    put("rllm.agent.max_steps", agent.max_turns, "agent.max_turns")
    put("rllm.agent.trajectory_timeout", agent.trajectory_timeout_s, "agent.trajectory_timeout_s")
    fixed("rllm.workflow.use_workflow", True, "backend")
    put("rllm.workflow.n_parallel_tasks", agent.parallel_episodes, "agent.parallel_episodes")
    # TaskRunner copies these config values over the workflow_args we pass: keep them equal to ours
    put("rllm.workflow.workflow_args.timeout", agent.trajectory_timeout_s, "agent.trajectory_timeout_s")
    put("rllm.rejection_sample.enable", algo.reject_zero_variance_groups, "algorithm.reject_zero_variance_groups")
    fixed("rllm.rejection_sample.multiplier", 1, "algorithm.reject_zero_variance_groups")
    # infrastructure errors are masked, never trained on as reward 0; cut episodes are graded, so kept
    fixed("rllm.compact_filtering.enable", True, "agent")
    fixed("rllm.compact_filtering.mask_error", True, "agent")
    fixed("rllm.compact_filtering.mask_unknown", False, "agent")
    fixed("rllm.compact_filtering.mask_timeout", False, "agent.trajectory_timeout_s")
    fixed("rllm.compact_filtering.mask_max_turns_exceeded", False, "agent.max_turns")
    fixed("rllm.compact_filtering.mask_max_prompt_length_exceeded", False, "lengths.max_model_len")
    fixed("rllm.compact_filtering.mask_max_response_length_exceeded", False, "lengths.max_model_len")
    return out
