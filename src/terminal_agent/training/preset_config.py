"""Training presets: typed, loaded from the YAML files in ``training/presets``, changed by ``key=value``.

A preset is data. ``load_preset("prod_32b_8_gpus", ["rollout.n=16"])`` reads the packaged YAML
(or a path to one), follows ``extends:`` to its parent, applies the dotted overrides and returns
a validated preset. Every error is a :class:`ConfigError` that names the exact key
(``batch.train_batch_size``), never a pydantic dump.

:class:`TrainingPreset` holds the sections every trainer backend reads; a preset's ``backend``
picks its type (:func:`preset_class`), which each backend declares in its own package with the
keys only it reads (``training/local/preset_sections.py``: the ``local`` section;
``training/verl/preset_sections.py``: verl's fields of ``model``, ``data``, ``batch``... and its
``parallel``, ``offload`` and ``runtime_env`` sections). What the keys mean for verl/rLLM is in
:mod:`terminal_agent.training.verl.overrides`.
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
#: Where a run's metrics go (``trainer.loggers``); a backend's preset may accept more (verl: ``tensorboard``).
LoggerName = Literal["console", "wandb", "file"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True, use_attribute_docstrings=True)


class ModelSection(_Section):
    """The policy being trained."""

    path: str
    """Hugging Face id or local directory of the model; ``embedded`` = the packaged SmolLM2-135M (for verl its
    converted transformers directory in the cache, made once by ``ensure_embedded_model_cached``)."""


class ClusterSection(_Section):
    """Machines of the run."""

    nodes: int = Field(1, ge=1)
    """Number of machines (Ray nodes)."""
    gpus_per_node: int = Field(1, ge=0)
    """GPUs on each machine (0 only for local CPU presets)."""

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node


class DataSection(_Section):
    """Where the tasks come from and how they split into train and validation."""

    tasks: str | None = "dataset/latest_verified.csv"
    """Task source (CSV, task directory or directory of them); None only where a backend takes a ready parquet
    (verl's ``data.train_files``)."""
    val_fraction: float = Field(0.1, ge=0.0, lt=1.0)
    """Share of ``tasks`` held out for validation (deterministic by task id and ``split_seed``)."""
    split_seed: int = 0
    """Seed of the train/validation split."""
    splits: str | None = None
    """A frozen splits file (``dataset/splits/splits.json``): its ``train`` split is trained on and its ``held_out``
    split validates, shipped tasks looked up in ``tasks`` and family instances regenerated; None: ``tasks`` split
    by ``val_fraction``."""

    def ready_parquet(self) -> str | None:
        """A parquet file the run takes as it is instead of ``tasks`` (a backend's key); None: ``tasks`` is read."""
        return None

    @model_validator(mode="after")
    def _one_source(self) -> "DataSection":
        if self.tasks is None and self.ready_parquet() is None:
            raise ValueError(self.missing_source_message())
        return self

    def missing_source_message(self) -> str:
        """What the error says when no task source is set."""
        return "set data.tasks (a task source)"


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


class BatchSection(_Section):
    """Batch geometry (tasks, not episodes: verl multiplies by ``rollout.n``)."""

    train_batch_size: int = Field(..., ge=1)
    """Tasks per training step."""
    ppo_mini_batch_size: int = Field(..., ge=1)
    """Tasks per optimizer step (a step's batch is split into train_batch_size / ppo_mini_batch_size updates)."""


class LengthsSection(_Section):
    """Token lengths. The whole context, not one reply, is what vLLM's max_model_len bounds."""

    max_prompt_length: int = Field(..., ge=64)
    """First prompt (system prompt + instruction)."""
    max_response_length_per_turn: int = Field(..., ge=16)
    """Cap of one model reply (per-turn max_tokens)."""
    max_model_len: int = Field(..., ge=128)
    """Whole context of an episode: first prompt + every reply + every observation."""

    @model_validator(mode="after")
    def _context_holds_a_turn(self) -> "LengthsSection":
        needed = self.max_prompt_length + self.max_response_length_per_turn
        if self.max_model_len < needed:
            raise ValueError(f"max_model_len {self.max_model_len} (the whole context) is below max_prompt_length + "
                             f"max_response_length_per_turn = {needed}")
        return self

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
    @field_validator("adv_estimator")
    @classmethod
    def _registered_estimator(cls, name: str) -> str:
        ADVANTAGE_ESTIMATORS.get(name)  # raises ConfigError listing the valid names
        return name


class TrainerSection(_Section):
    """Loop length, checkpoints, validation, logging."""

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
    resume: Literal["auto", "disable"] = "auto"
    """auto = continue from the run directory's latest checkpoint when there is one; disable = start over."""
    max_checkpoints_to_keep: int | None = Field(None, ge=1)
    """Older checkpoints are deleted beyond this many; None keeps all."""
    harbor_rollouts: RolloutTrialsConfig = Field(default_factory=RolloutTrialsConfig)
    """Which steps' training episodes are kept as Harbor trials in ``<run dir>/rollouts/`` (``enabled``,
    ``every_n_steps``, ``only_groups_with_variance``, ``max_disk_mb``; ``terminal-agent view RUN`` opens them;
    docs/harbor_jobs.md): by the rLLM Workflow on the verl path, by the local trainer on the local one."""


class SandboxSection(_Section):
    """Where episodes run."""

    backend: str = "docker"
    """Sandbox backend of the environment by name (``terminal_agent.sandbox.backends``: docker, bwrap, ...), or
    ``auto``: resolved when the launch is planned, docker where a Docker daemon answers, else bwrap."""
    env: dict[str, Any] = Field(default_factory=dict)
    """Extra ``EnvConfig`` settings passed as rLLM env_args (``sandbox``, ``actions``, ``grading``, ``judge``)."""


class TrainingPreset(_Section):
    """The sections every trainer backend reads. A preset is one of its subclasses, picked by ``backend``
    (:func:`preset_class`): each backend declares its own in its package (``training/<backend>/preset_sections.py``),
    with the keys only it reads: its own section (``local``), or its own fields in the sections above (verl's
    ``model.lora_rank``, ``parallel``, ``runtime_env``...). A key another backend reads is then no key of this
    preset: an unknown key, named."""

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
    trainer: TrainerSection = Field(default_factory=TrainerSection)
    """Loop, checkpoints, logging."""
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    """Sandbox backend and env settings."""
    reward: RewardConfig = Field(default_factory=RewardConfig)
    """Reward mix (the env's own RewardConfig: test/judge weights, judge failure policy)."""
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


def preset_class(backend: str) -> type[TrainingPreset]:
    """The preset type of the trainer backend ``backend``: the common sections with that backend's own keys
    (its entry's ``preset_type``). Raises :class:`ConfigError` listing the registered backends."""
    preset_type: type[TrainingPreset] = TRAINER_BACKENDS.get(backend).preset_type
    return preset_type


def preset_class_of(data: dict[str, Any]) -> type[TrainingPreset]:
    """The preset type that validates the mapping ``data``: its ``backend``'s, or the common sections alone
    while ``backend`` names no registered backend (validation then names the key)."""
    backend = data.get("backend")
    if isinstance(backend, str) and backend in TRAINER_BACKENDS:
        return preset_class(backend)
    return TrainingPreset


def _section_model(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    """The section type of ``model``'s field ``name`` (None: the field is no section, or ``model`` has no such field)."""
    field = model.model_fields.get(name)
    if field is None:
        return None
    annotation = field.annotation
    candidates = [annotation, *getattr(annotation, "__args__", ())]
    return next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)


def _model_for(parts: list[str], preset_type: type[TrainingPreset]) -> tuple[type[BaseModel] | None, int]:
    """The pydantic model that should hold ``parts[index]``, with that index: the owner of the last part, or of
    the first part that names no field (None: inside a free mapping)."""
    model: type[BaseModel] | None = preset_type
    for index, part in enumerate(parts[:-1]):
        if model is None:
            return None, index
        if part not in model.model_fields:
            return model, index
        model = _section_model(model, part)
    return model, len(parts) - 1


def is_preset_key(parts: list[str], preset_type: type[TrainingPreset] = TrainingPreset) -> bool:
    """Whether the dotted key ``parts`` names a key of ``preset_type``: one of its fields or of one of its
    sections, or a name inside one of its free mappings (``sandbox.env.*``, verl's ``runtime_env.env_vars.*``)."""
    model: type[BaseModel] = preset_type
    for index, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return False
        if index == len(parts) - 1:
            return True
        submodel = _section_model(model, part)
        if submodel is None:
            annotation = field.annotation
            candidates = [annotation, *getattr(annotation, "__args__", ())]
            return any(typing.get_origin(c) is dict or c is dict for c in candidates)  # a free mapping
        model = submodel
    return True


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``data`` with each dotted ``key=value`` set; an unknown key (of the preset type of ``data``'s backend)
    is a ConfigError listing the valid ones."""
    out = copy.deepcopy(data)
    for text in overrides:
        parts, value = parse_override(text)
        model, index = _model_for(parts, preset_class_of(out))
        parent = ".".join(parts[:index])
        if model is not None and parts[index] not in model.model_fields:
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
    preset_type = preset_class_of(data)
    try:
        preset = preset_type.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first.get("loc", ())) or "preset"
        message = str(first.get("msg", exc)).removeprefix("Value error, ")
        if first.get("type") == "extra_forbidden":
            message = "unknown key" + (f" of a backend {data['backend']} preset" if preset_type is not TrainingPreset
                                       else "")
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
