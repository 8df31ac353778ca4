"""The arguments a preset's episodes are built from: the env's (``EnvConfig`` keys), the agent's and the
episode settings, as the keyword arguments of the rLLM Workflow
(:class:`~terminal_agent.training.verl.rllm_workflow.TerminalTaskWorkflow`).

They read only the common sections of a preset, so every trainer backend's plan holds them
(the dry run shows them) and the launcher checks them by building the env and the agent
exactly as the Workflow will.
"""

from __future__ import annotations

from typing import Any

from terminal_agent.training.preset_config import TrainingPreset


def env_args_for(preset: TrainingPreset) -> dict[str, Any]:
    """rLLM ``env_args`` of :class:`~terminal_agent.env.DockerIsolatedEnv` (EnvConfig keys)."""
    env_args: dict[str, Any] = dict(preset.sandbox.env)
    env_args["max_steps"] = preset.agent.max_turns
    env_args["sandbox"] = {**dict(env_args.get("sandbox") or {}), "backend": preset.sandbox.backend}
    env_args["reward"] = preset.reward.model_dump()
    return env_args


def agent_args_for(preset: TrainingPreset) -> dict[str, Any]:
    """rLLM ``agent_args`` of :class:`~terminal_agent.agent.TerminalBenchAgent` (AgentConfig keys)."""
    return {}


def workflow_args_for(preset: TrainingPreset) -> dict[str, Any]:
    """Keyword arguments of ``TerminalTaskWorkflow`` (after rLLM's rollout_engine and executor)."""
    return {
        "agent_args": agent_args_for(preset),
        "env_args": env_args_for(preset),
        "max_steps": preset.agent.max_turns,
        "max_tokens_per_turn": preset.lengths.max_response_length_per_turn,
        "max_context_tokens": preset.lengths.max_model_len,
        "compaction": preset.agent.compaction,
        "timeout": preset.agent.trajectory_timeout_s,
        "harbor_rollouts": harbor_rollouts_args_for(preset),
    }


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
