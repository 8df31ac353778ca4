"""The arithmetic a verl preset must satisfy before anything is launched (the verl backend's ``check_geometry``).

Each rule is a function ``(preset, heads) -> list[GeometryProblem]`` registered by name in
:data:`GEOMETRY_RULES`; a problem names the preset key to change. The rules restate what verl,
vLLM and Ulysses attention require, so a preset fails here, in a second, not after a cluster
has loaded a 32B model:

* ``batch_divisible``  train_batch_size x rollout.n divisible by the GPU count (verl ``validate_config``);
* ``mini_batch``       the mini batch splits evenly over data-parallel ranks and micro batches;
* ``sp_in_node``       Ulysses SP at most the GPUs of one node, and dividing them (all-to-all stays on NVLink);
* ``heads_by_sp``      attention heads divisible by SP (Ulysses splits heads across the SP group);
* ``sp_remove_padding`` SP above 1 only with ``model.use_remove_padding`` (Ulysses splits the packed sequence);
* ``tp_replicas``      vLLM TP x replicas at most the GPU count, TP inside one node, heads divisible by TP;
* ``lora_rank``        a LoRA rank vLLM can serve (verl rounds it up to one of vLLM's ranks, at most 512;
                       verl's own check needs vLLM installed, so it is restated here).

:func:`verl_placement` shows the same arithmetic as numbers (the dry run prints it): nodes x GPUs, the
actor's FSDP world, vLLM TP and replicas, the rows a step makes and how they split per GPU; it is built
only for a preset these rules passed, so every division in it is exact.

Attention head counts of the preset models are data (:data:`MODEL_ATTENTION_HEADS`, from each
model's ``config.json``); a local model directory is read directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from terminal_agent.errors import ConfigError
from terminal_agent.registry import Registry
from terminal_agent.training.verl.preset_sections import VerlPreset


@dataclass(frozen=True)
class AttentionHeads:
    """Head counts of one model (``num_attention_heads``, ``num_key_value_heads`` of its config.json)."""

    query: int
    key_value: int


#: Head counts of the models the presets use (from each model's config.json).
MODEL_ATTENTION_HEADS: dict[str, AttentionHeads] = {
    "Qwen/Qwen3-0.6B": AttentionHeads(16, 8),
    "Qwen/Qwen3-1.7B": AttentionHeads(16, 8),
    "Qwen/Qwen3-4B": AttentionHeads(32, 8),
    "Qwen/Qwen3-8B": AttentionHeads(32, 8),
    "Qwen/Qwen3-14B": AttentionHeads(40, 8),
    "Qwen/Qwen3-32B": AttentionHeads(64, 8),
    "Qwen/Qwen2.5-7B-Instruct": AttentionHeads(28, 4),
    "Qwen/Qwen2.5-32B-Instruct": AttentionHeads(40, 8),
    # the packaged SmolLM2-135M-Instruct of the local presets
    "embedded": AttentionHeads(9, 3),
    "HuggingFaceTB/SmolLM2-135M-Instruct": AttentionHeads(9, 3),
}


@dataclass(frozen=True)
class GeometryProblem:
    """One broken rule: which rule, which preset key to change, and why."""

    rule: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message} [{self.rule}]"


GeometryRule = Callable[[VerlPreset, AttentionHeads], list[GeometryProblem]]
GEOMETRY_RULES: Registry[GeometryRule] = Registry("geometry rule")


def attention_heads(model_path: str) -> AttentionHeads:
    """Head counts of ``model_path``: the table, else the ``config.json`` of a local directory."""
    if model_path in MODEL_ATTENTION_HEADS:
        return MODEL_ATTENTION_HEADS[model_path]
    config_file = Path(model_path).expanduser() / "config.json"
    if config_file.is_file():
        try:
            config = json.loads(config_file.read_text())
            query = int(config["num_attention_heads"])
            return AttentionHeads(query, int(config.get("num_key_value_heads", query)))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"model.path: cannot read the head counts from {config_file}: {exc}") from None
    known = ", ".join(sorted(MODEL_ATTENTION_HEADS))
    raise ConfigError(
        f"model.path: head counts of {model_path!r} are unknown (known: {known}); use a local model directory "
        "with a config.json or add the model to geometry_checks.MODEL_ATTENTION_HEADS"
    )


@GEOMETRY_RULES.register("batch_divisible")
def check_batch_divisible(preset: VerlPreset, heads: AttentionHeads) -> list[GeometryProblem]:
    gpus = preset.cluster.total_gpus
    episodes = preset.batch.train_batch_size * preset.rollout.n
    if episodes % gpus:
        return [GeometryProblem("batch_divisible", "batch.train_batch_size",
                                f"batch.train_batch_size x rollout.n = {preset.batch.train_batch_size} x "
                                f"{preset.rollout.n} = {episodes} episodes (rows) is not divisible by cluster.nodes x "
                                f"cluster.gpus_per_node = {preset.cluster.nodes} x {preset.cluster.gpus_per_node} = "
                                f"{gpus} GPUs")]
    return []


@GEOMETRY_RULES.register("mini_batch")
def check_mini_batch(preset: VerlPreset, heads: AttentionHeads) -> list[GeometryProblem]:
    batch = preset.batch
    if batch.ppo_mini_batch_size > batch.train_batch_size or batch.train_batch_size % batch.ppo_mini_batch_size:
        return [GeometryProblem("mini_batch", "batch.ppo_mini_batch_size",
                                f"ppo_mini_batch_size {batch.ppo_mini_batch_size} must divide train_batch_size "
                                f"{batch.train_batch_size}")]
    data_parallel = preset.cluster.total_gpus // preset.parallel.sequence_parallel
    if data_parallel < 1:
        return []  # sp_in_node reports it
    episodes = batch.ppo_mini_batch_size * preset.rollout.n
    if episodes % data_parallel:
        return [GeometryProblem("mini_batch", "batch.ppo_mini_batch_size",
                                f"batch.ppo_mini_batch_size x rollout.n = {batch.ppo_mini_batch_size} x "
                                f"{preset.rollout.n} = {episodes} episodes does not split over the {data_parallel} "
                                "data-parallel ranks (cluster GPUs / parallel.sequence_parallel)")]
    per_rank = episodes // data_parallel
    if per_rank % batch.micro_batch_size_per_gpu:
        return [GeometryProblem("mini_batch", "batch.micro_batch_size_per_gpu",
                                f"{per_rank} episodes per rank per mini batch (batch.ppo_mini_batch_size x rollout.n / "
                                f"{data_parallel} ranks) is not a multiple of batch.micro_batch_size_per_gpu "
                                f"{batch.micro_batch_size_per_gpu}")]
    return []


@GEOMETRY_RULES.register("sp_in_node")
def check_sp_in_node(preset: VerlPreset, heads: AttentionHeads) -> list[GeometryProblem]:
    sp, per_node = preset.parallel.sequence_parallel, preset.cluster.gpus_per_node
    if sp > per_node:
        return [GeometryProblem("sp_in_node", "parallel.sequence_parallel",
                                f"Ulysses sequence_parallel {sp} spans nodes: one node has {per_node} GPUs "
                                "(its all-to-all per layer must stay inside a node)")]
    if per_node % sp:
        return [GeometryProblem("sp_in_node", "parallel.sequence_parallel",
                                f"sequence_parallel {sp} does not divide the {per_node} GPUs of a node, so a group "
                                "would span two nodes")]
    return []


@GEOMETRY_RULES.register("heads_by_sp")
def check_heads_by_sp(preset: VerlPreset, heads: AttentionHeads) -> list[GeometryProblem]:
    sp = preset.parallel.sequence_parallel
    if sp == 1:
        return []
    problems = []
    if heads.query % sp:
        problems.append(GeometryProblem("heads_by_sp", "parallel.sequence_parallel",
                                        f"{preset.model.path} has {heads.query} attention heads, not divisible by "
                                        f"sequence_parallel {sp}"))
    elif heads.key_value % sp and sp % heads.key_value:
        problems.append(GeometryProblem("heads_by_sp", "parallel.sequence_parallel",
                                        f"{preset.model.path} has {heads.key_value} key/value heads: neither a "
                                        f"multiple nor a divisor of sequence_parallel {sp}"))
    return problems


@GEOMETRY_RULES.register("sp_remove_padding")
def check_sp_remove_padding(preset: VerlPreset, heads: AttentionHeads) -> list[GeometryProblem]:
    if preset.parallel.sequence_parallel > 1 and not preset.model.use_remove_padding:
        return [GeometryProblem("sp_remove_padding", "model.use_remove_padding",
                                f"sequence_parallel {preset.parallel.sequence_parallel} needs use_remove_padding: "
                                "Ulysses splits the packed (padding-free) sequence across the group")]
    return []


@GEOMETRY_RULES.register("tp_replicas")
def check_tp_replicas(preset: VerlPreset, heads: AttentionHeads) -> list[GeometryProblem]:
    tp, gpus, per_node = preset.parallel.tensor_parallel, preset.cluster.total_gpus, preset.cluster.gpus_per_node
    replicas = preset.parallel.rollout_replicas or max(gpus // tp, 1)
    if tp * replicas > gpus:
        return [GeometryProblem("tp_replicas", "parallel.tensor_parallel",
                                f"tensor_parallel {tp} x {replicas} rollout replica(s) = {tp * replicas} GPUs, "
                                f"more than the {gpus} there are")]
    if tp > per_node or per_node % tp:
        return [GeometryProblem("tp_replicas", "parallel.tensor_parallel",
                                f"tensor_parallel {tp} must divide the {per_node} GPUs of one node (a vLLM engine "
                                "stays inside a node)")]
    if heads.query % tp:
        return [GeometryProblem("tp_replicas", "parallel.tensor_parallel",
                                f"{preset.model.path} has {heads.query} attention heads, not divisible by "
                                f"tensor_parallel {tp}")]
    return []


#: vLLM's ``MaxLoRARanks`` (verl 0.9.1 rounds a rank up to the next one; none above the last).
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


@GEOMETRY_RULES.register("lora_rank")
def check_lora_rank(preset: VerlPreset, heads: AttentionHeads) -> list[GeometryProblem]:
    rank = preset.model.lora_rank
    if rank > VLLM_LORA_RANKS[-1]:
        return [GeometryProblem("lora_rank", "model.lora_rank",
                                f"LoRA rank {rank} is above vLLM's largest LoRA rank {VLLM_LORA_RANKS[-1]}")]
    return []


def check_geometry(preset: VerlPreset) -> list[GeometryProblem]:
    """Every broken rule of ``preset`` (empty when it is sound)."""
    heads = attention_heads(preset.model.path)
    problems: list[GeometryProblem] = []
    for name in GEOMETRY_RULES.names():
        problems.extend(GEOMETRY_RULES.get(name)(preset, heads))
    return problems


def require_sound_geometry(preset: VerlPreset) -> None:
    """Raise one :class:`ConfigError` listing every broken rule (the first one's key leads)."""
    problems = check_geometry(preset)
    if problems:
        raise ConfigError("; ".join(str(problem) for problem in problems))


# --- the placement plan the dry run prints ------------------------------------------------------------
class _PlanRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GpuPlacement(_PlanRecord):
    """Where a verl run's model work lands (verl's hybrid engine: actor, reference and vLLM share every GPU)."""

    nodes: int
    """``cluster.nodes``: Ray nodes of the run."""
    gpus_per_node: int
    """``cluster.gpus_per_node``."""
    total_gpus: int
    """nodes x gpus_per_node: verl's world size."""
    actor_fsdp_world_size: int
    """FSDP ranks of the actor (and reference): every GPU of the run shards the model."""
    sequence_parallel: int
    """``parallel.sequence_parallel``: Ulysses group size inside one node (ranks sharing one sequence)."""
    data_parallel_ranks: int
    """Actor ranks that take different rows: FSDP world / sequence_parallel."""
    rollout_tensor_parallel: int
    """``parallel.tensor_parallel``: GPUs of one vLLM engine, inside one node."""
    rollout_replicas: int
    """vLLM engines serving the rollouts: world size / tensor_parallel."""


class BatchArithmetic(_PlanRecord):
    """The batch numbers verl checks against the GPU count, each division exact (the geometry rules held)."""

    train_batch_size: int
    """``batch.train_batch_size``: tasks per training step."""
    rollout_n: int
    """``rollout.n``: episodes per task (the GRPO group)."""
    rows_per_step: int
    """train_batch_size x rollout.n: the rows (episodes) of one step; verl requires them divisible by the GPUs."""
    rows_per_gpu: int
    """rows_per_step / total GPUs."""
    ppo_mini_batch_size: int
    """``batch.ppo_mini_batch_size``: tasks per optimizer step."""
    optimizer_steps_per_step: int
    """train_batch_size / ppo_mini_batch_size."""
    mini_batch_rows: int
    """ppo_mini_batch_size x rollout.n."""
    mini_batch_rows_per_rank: int
    """mini_batch_rows / data-parallel ranks (what verl turns ``ppo_mini_batch_size`` into on each rank)."""
    micro_batch_size_per_gpu: int
    """``batch.micro_batch_size_per_gpu``: rows per forward/backward on one GPU."""
    micro_batches_per_mini_batch: int
    """mini_batch_rows_per_rank / micro_batch_size_per_gpu: gradient-accumulation steps per optimizer step."""


def gpu_placement(preset: VerlPreset) -> GpuPlacement:
    """The GPU layout of a verl preset whose geometry is sound."""
    cluster, parallel = preset.cluster, preset.parallel
    world = cluster.total_gpus
    return GpuPlacement(
        nodes=cluster.nodes, gpus_per_node=cluster.gpus_per_node, total_gpus=world, actor_fsdp_world_size=world,
        sequence_parallel=parallel.sequence_parallel, data_parallel_ranks=world // parallel.sequence_parallel,
        rollout_tensor_parallel=parallel.tensor_parallel, rollout_replicas=world // parallel.tensor_parallel,
    )


def batch_arithmetic(preset: VerlPreset) -> BatchArithmetic:
    """The batch numbers of a verl preset whose geometry is sound (every division exact)."""
    batch, n = preset.batch, preset.rollout.n
    rows = batch.train_batch_size * n
    data_parallel = preset.cluster.total_gpus // preset.parallel.sequence_parallel
    mini_rows = batch.ppo_mini_batch_size * n
    per_rank = mini_rows // data_parallel
    return BatchArithmetic(
        train_batch_size=batch.train_batch_size, rollout_n=n, rows_per_step=rows,
        rows_per_gpu=rows // preset.cluster.total_gpus, ppo_mini_batch_size=batch.ppo_mini_batch_size,
        optimizer_steps_per_step=batch.train_batch_size // batch.ppo_mini_batch_size, mini_batch_rows=mini_rows,
        mini_batch_rows_per_rank=per_rank, micro_batch_size_per_gpu=batch.micro_batch_size_per_gpu,
        micro_batches_per_mini_batch=per_rank // batch.micro_batch_size_per_gpu,
    )


def verl_placement(preset: VerlPreset) -> dict[str, Any]:
    """The dry run's ``placement`` keys of a verl preset (``gpus``, ``batch``), its geometry checked first (a
    ConfigError names the key of a broken rule)."""
    require_sound_geometry(preset)
    return {"gpus": gpu_placement(preset).model_dump(mode="json"),
            "batch": batch_arithmetic(preset).model_dump(mode="json")}
