"""The keyword arguments of the rLLM Workflow (:class:`~terminal_agent.training.verl.rllm_workflow.TerminalTaskWorkflow`)
of a preset: its episode spec (:class:`~terminal_agent.rollout.episode_spec.EpisodeSpec`, the env, agent and episode
settings) serialised, and where the training episodes are kept.

They read only the common sections of a preset, so every trainer backend's plan holds them (the dry run shows
them) and the launcher checks them by building the env and the agent from the spec, as the Workflow will.
"""

from __future__ import annotations

from typing import Any

from terminal_agent.rollout.episode_spec import EpisodeSpec
from terminal_agent.training.preset_config import TrainingPreset


def workflow_args_for(preset: TrainingPreset) -> dict[str, Any]:
    """Keyword arguments of ``TerminalTaskWorkflow`` (after rLLM's rollout_engine and executor): the preset's
    :class:`~terminal_agent.rollout.episode_spec.EpisodeSpec` serialised, then ``harbor_rollouts``."""
    return {**EpisodeSpec.from_preset(preset).to_workflow_args(), "harbor_rollouts": harbor_rollouts_args_for(preset)}


def harbor_rollouts_args_for(preset: TrainingPreset) -> dict[str, Any] | None:
    """The Workflow's ``harbor_rollouts`` (``RllmRolloutTrialsSettings`` fields) from ``trainer.harbor_rollouts``, the
    GRPO group (``rollout.n``) and the advantage settings verl computes with; None when the trials are off."""
    retention = preset.trainer.harbor_rollouts
    if not retention.enabled:
        return None
    return {
        "run_dir": str(preset.run_dir.resolve()),  # absolute: rLLM's TaskRunner is a Ray actor with its own cwd
        "retention": retention.model_dump(),
        "group_size": preset.rollout.n,
        "adv_estimator": preset.algorithm.adv_estimator,
        "norm_adv_by_std_in_grpo": preset.algorithm.norm_adv_by_std_in_grpo,
        "rejection_sample": preset.algorithm.reject_zero_variance_groups,
        "model_name": preset.model.path,
        "experiment": preset.experiment,
    }
