"""The verl backend's half of a launch: plan a verl run, show it, check the machine and start it.

    plan = plan_launch(preset)        # the launcher's common checks, then plan_verl (the backend's hook ``plan``)
    launch(plan)                      # the launcher's dry run, then launch_verl (the backend's hook ``launch``)

:func:`plan_verl` resolves the data files and the model path (``embedded``: the packaged model's converted
directory), maps the preset onto rLLM/verl hydra keys and composes them with Hydra against the real YAML (the
command line's raw keys after them; a preset key of the command line that rLLM/verl has too must agree), binds
the Workflow's arguments to its signature where it imports, and runs level 2 (verl's ``validate_config``).
:func:`verl_dry_run_fields` is the verl part of the dry run: the Ray workers' ``runtime_env``
(:func:`~.worker_environment.ray_runtime_env`), the model, the data files, every hydra key and where it comes from, level 2.

:func:`launch_verl` checks the machine (:mod:`~terminal_agent.training.verl.machine_checks`), sweeps leaked
sandboxes and keeps the cleanup daemon running, writes the parquet files
(:mod:`~terminal_agent.training.verl.data_files`), points verl at a model folder rLLM's parser takes, starts Ray
with a ``runtime_env`` that ships this package to every worker, and hands our Workflow
(:data:`WORKFLOW_CLASS_PATH`) to rLLM's ``AgentTrainer``, a stall watchdog over its metrics file beside it.
NVLink multicast stays off in every process of the run (:mod:`~terminal_agent.training.verl.worker_environment`).
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import ConfigError, TrainingSetupError
from terminal_agent.training.gpu_readiness import require_ready
from terminal_agent.training.launch_environment import load_object
from terminal_agent.training.launch_plan import LaunchPlan
from terminal_agent.training.preset_config import TrainingPreset
from terminal_agent.training.verl.data_files import check_verl_data_paths, write_parquet_files
from terminal_agent.training.verl.machine_checks import (
    check_packages,
    check_ray_cluster,
    check_sandbox_slots,
    check_wandb,
    ray_init_arguments,
)
from terminal_agent.training.verl.overrides import HydraOverride, verl_overrides
from terminal_agent.training.verl.preset_sections import VerlPreset, verl_preset
from terminal_agent.training.verl.verl_plan import VerlPlan
from terminal_agent.training.verl.worker_environment import ray_runtime_env, require_multicast_off, run_environment

if TYPE_CHECKING:  # hydra-core and the watchdog are imported where a verl plan or launch needs them
    from omegaconf import DictConfig

    from terminal_agent.training.verl.stall_watchdog import StallWatchdog

logger = logging.getLogger(__name__)

#: Where our Workflow for rLLM HEAD lives (written with the env conformance work).
WORKFLOW_CLASS_PATH = "terminal_agent.training.verl.rllm_workflow:TerminalTaskWorkflow"


# --- planning ------------------------------------------------------------------------------------
def check_no_compaction(preset: TrainingPreset) -> None:
    """The verl backend's agent check (its hook ``check_launch``)."""
    if preset.agent.compaction:
        raise ConfigError("agent.compaction: must be false for verl: compaction rewrites earlier turns, and rLLM's "
                          "token mode then sets every response mask to 0 (the run would train on nothing)")


def resolve_model_path(preset: VerlPreset) -> str:
    """The directory or hub id verl loads: ``model.path``, or for ``embedded`` the packaged model's converted
    transformers directory (converted once into the cache)."""
    if preset.model.path != "embedded":
        return preset.model.path
    from terminal_agent.models.embedded import ensure_embedded_model_cached

    try:
        return str(ensure_embedded_model_cached())
    except ImportError as exc:
        raise TrainingSetupError(f"model.path embedded: the conversion needs {exc.name!r} "
                                 "(pip install -e '.[model]')") from None


def _check_ambiguous_keys(preset: VerlPreset, overrides: list[HydraOverride]) -> None:
    """A preset key of the command line whose path rLLM/verl's config has too must map onto that very key with
    the same value; otherwise the user cannot know which one they set."""
    from terminal_agent.training.verl.schema import base_trainer_schema, schema_has_key

    schema = base_trainer_schema()
    for key in preset.command_line_keys:
        if not schema_has_key(schema, key):
            continue
        mapped = [o for o in overrides if o.source == key]
        value = preset
        for part in key.split("."):
            value = getattr(value, part) if not isinstance(value, dict) else value[part]
        if not any(o.key == key and o.value == value for o in mapped):
            targets = ", ".join(o.key for o in mapped) or "no rLLM/verl key"
            raise ConfigError(f"{key}: ambiguous: a preset key (mapped to {targets}) and a different rLLM/verl key of "
                              "the same name; set the preset key in a preset file, or the rLLM/verl key as "
                              f"++{key}=VALUE")


def effective_workflow_args(workflow_args: dict[str, Any], trainer_config: DictConfig) -> dict[str, Any]:
    """What rLLM's TaskRunner passes to the Workflow: ours with ``rllm.workflow.workflow_args`` laid over.

    (rLLM copies every non-null value of that config section over the arguments it was given,
    updating nested mappings.)
    """
    from terminal_agent.training.verl.schema import config_dict

    effective = {key: (dict(value) if isinstance(value, dict) else value) for key, value in workflow_args.items()}
    section = config_dict(trainer_config.rllm.workflow.workflow_args, resolve=True, what="rllm.workflow.workflow_args")
    for key, value in section.items():
        if value is None:
            continue
        if isinstance(effective.get(key), dict):
            effective[key].update(value)
        else:
            effective[key] = value
    return effective


def _check_workflow_signature(workflow_args: dict[str, Any], notes: list[str]) -> None:
    """Bind the Workflow's arguments to its __init__ when the class imports here."""
    try:
        workflow_class = load_object(WORKFLOW_CLASS_PATH, "the rLLM Workflow")
    except TrainingSetupError as exc:
        notes.append(f"workflow arguments not checked against the Workflow's signature: {exc}")
        return
    try:
        inspect.signature(workflow_class).bind(rollout_engine=None, executor=None, **workflow_args)
    except TypeError as exc:
        raise ConfigError(f"agent / sandbox: the Workflow does not take these arguments: {exc}") from None


def plan_verl(plan: LaunchPlan[VerlPlan], *, level2: bool = True,
              verl_python: str | None = None) -> LaunchPlan[VerlPlan]:
    """The verl backend's part of :func:`~terminal_agent.training.launcher.plan_launch`: data files, model path,
    hydra keys composed with Hydra, the Workflow's signature and level 2."""
    preset = verl_preset(plan.preset)
    check_verl_data_paths(preset)
    require_multicast_off(preset)
    from terminal_agent.training.verl.schema import compose_trainer_config, validate_with_verl

    data_dir = plan.run_dir / "data"
    train_files = preset.data.train_files or str(data_dir / "train.parquet")
    val_files: str | None = None
    if preset.data.train_files is not None:
        val_files = preset.data.val_files
    elif preset.data.val_fraction > 0:
        val_files = str(data_dir / "val.parquet")
    model_path = resolve_model_path(preset)
    hydra_overrides = verl_overrides(preset, train_files=train_files, val_files=val_files, model_path=model_path)
    _check_ambiguous_keys(preset, hydra_overrides)
    trainer_config = compose_trainer_config(hydra_overrides, plan.raw_overrides)
    _check_workflow_signature(effective_workflow_args(plan.workflow_args, trainer_config), plan.notes)
    verl_plan = VerlPlan(train_files=train_files, val_files=val_files, model_path=model_path,
                         hydra_overrides=hydra_overrides, trainer_config=trainer_config)
    if level2:
        verl_plan.level2 = validate_with_verl(trainer_config, python=verl_python)
        if not verl_plan.level2.ran:
            plan.notes.append(f"level 2 (verl validate_config) not run: {verl_plan.level2.reason}")
        plan.notes.extend(verl_plan.level2.notes)
    plan.backend_plan = verl_plan
    return plan


# --- the dry run ---------------------------------------------------------------------------------
def verl_dry_run_fields(plan: LaunchPlan[VerlPlan]) -> dict[str, Any]:
    """The verl backend's keys of the dry run: the Ray workers' ``runtime_env`` (the common document holds its
    key, None, in its place), model, data files, every hydra key and where it comes from, level 2."""
    verl_plan = plan.backend_part()
    fields: dict[str, Any] = {
        "ray_runtime_env": ray_runtime_env(verl_preset(plan.preset)),
        "model_path": verl_plan.model_path,
        "train_files": verl_plan.train_files,
        "val_files": verl_plan.val_files,
        "hydra_overrides": [override.to_hydra() for override in verl_plan.hydra_overrides],
        "raw_overrides": [override.to_hydra() for override in plan.raw_overrides],
        "hydra_key_sources": hydra_key_sources(plan),
    }
    if verl_plan.level2 is not None:
        fields["level2"] = {"ran": verl_plan.level2.ran, "where": verl_plan.level2.where,
                            "verl": verl_plan.level2.verl_version, "reason": verl_plan.level2.reason}
    return fields


def write_verl_launch_files(plan: LaunchPlan[VerlPlan], launch_dir: Path) -> None:
    """Beside the dry run: the composed rLLM/verl config, redacted, as ``trainer_config.yaml``."""
    import yaml
    from omegaconf import OmegaConf

    from terminal_agent.training.redaction import redact

    composed = redact(OmegaConf.to_container(plan.backend_part().trainer_config, resolve=False))
    (launch_dir / "trainer_config.yaml").write_text(yaml.safe_dump(composed, sort_keys=False, width=120))


def hydra_key_sources(plan: LaunchPlan[VerlPlan]) -> dict[str, str]:
    """Where each hydra key the launch sets gets its value: ``preset KEY`` (the preset's file), ``command line
    KEY`` (a preset key given on the command line), ``mapping (KEY)`` (a value the project fixes; KEY governs it),
    ``command line`` (a raw hydra key). Keys not listed keep rLLM/verl's defaults."""
    command_line = set(plan.preset.command_line_keys)
    sources: dict[str, str] = {}
    for override in plan.backend_part().hydra_overrides:
        if override.origin == "mapping":
            sources[override.key] = f"mapping ({override.source})"
        elif override.source in command_line:
            sources[override.key] = f"command line {override.source}"
        else:
            sources[override.key] = f"preset {override.source}"
    for raw_override in plan.raw_overrides:
        earlier = sources.get(raw_override.key)
        sources[raw_override.key] = "command line" if earlier is None else f"command line (agrees with {earlier})"
    return sources


# --- the launch ----------------------------------------------------------------------------------
RLLM_MODEL_DIR = "model_for_rllm"
"""Beside the run: the model folder rLLM's VerlEngine is pointed at when the model's own does not suit it."""


def point_verl_at_rllm_ready_model(plan: LaunchPlan[VerlPlan]) -> str | None:
    """rLLM's ``VerlEngine`` chooses its chat parser by the model folder's name and refuses a template its
    generic parser cannot split turn by turn (SmolLM2's, which adds its default system prompt to a message
    rendered alone). Where that is so, verl loads :func:`prepare_model_dir_for_rllm`'s folder beside the run
    (the same weights, linked; the template wrapped so that rLLM's check holds) and the Workflow renders
    prompts with its own parser. A hub id (no local folder) is left to rLLM. Returns the new path, or None."""
    from terminal_agent.training.verl.rllm_chat_parser import prepare_model_dir_for_rllm

    trainer_config = plan.backend_part().trainer_config
    path = str(trainer_config.actor_rollout_ref.model.path)
    if not Path(path).is_dir():
        return None
    prepared = prepare_model_dir_for_rllm(path, plan.run_dir / RLLM_MODEL_DIR)
    if Path(prepared).resolve() == Path(path).resolve():
        return None
    trainer_config.actor_rollout_ref.model.path = str(prepared)
    logger.info("rLLM's parser does not take %s's chat template: verl loads %s (same weights)", path, prepared)
    return str(prepared)


def _stop_stalled_run(reason: str) -> None:
    """The watchdog's end of a stalled run: say why, let Ray go (30 s at most), exit with EXIT_STALLED."""
    import threading

    from terminal_agent.training.verl.stall_watchdog import EXIT_STALLED

    logger.error("stopping the run: %s", reason)

    def shutdown() -> None:
        try:
            import ray

            ray.shutdown()
        except Exception as exc:  # noqa: BLE001 - the process exits next either way; the reason is logged
            logger.warning("ray.shutdown on the way out: %s", exc)

    worker = threading.Thread(target=shutdown, daemon=True)
    worker.start()
    worker.join(30)
    os._exit(EXIT_STALLED)  # the driver's own thread is blocked inside verl: only a hard exit ends the wait


def start_stall_watchdog(plan: LaunchPlan[Any], on_stall: Callable[[str], None] | None = None) -> StallWatchdog | None:
    """A :class:`~terminal_agent.training.verl.stall_watchdog.StallWatchdog` over the run's metrics file, started; None
    when ``trainer.stall_timeout_s`` is None or the ``file`` logger is off (a note is logged)."""
    from terminal_agent.training.verl.stall_watchdog import StallWatchdog

    preset = verl_preset(plan.preset)
    trainer = preset.trainer
    if trainer.stall_timeout_s is None:
        return None
    path = run_environment(preset).get("VERL_FILE_LOGGER_PATH")
    if "file" not in trainer.loggers or not path:
        logger.warning("trainer.stall_timeout_s is set but the file logger is off: a stalled run is not stopped")
        return None
    return StallWatchdog(Path(path), plan.run_dir, trainer.stall_timeout_s, on_stall or _stop_stalled_run).start()


def launch_verl(plan: LaunchPlan[VerlPlan], rehearse: bool = False) -> None:
    """The verl backend's launch (its hook ``launch``)."""
    preset = verl_preset(plan.preset)
    require_multicast_off(preset)  # again at launch time: the environment may have changed since the plan
    if rehearse:
        logger.warning("rehearsal: the vLLM and GPU checks are skipped and Ray gets %d GPU(s) it may not have; "
                       "the run stops at its first GPU or vLLM call", preset.cluster.total_gpus)
        check_packages(need_vllm=False)
    else:  # the driver, the GPUs, the packages, the attention, the sandbox backend: all refusals at once (exit 2)
        require_ready(preset)
    check_wandb(preset)
    from terminal_agent.training.verl.schema import validate_with_verl

    trainer_config = plan.backend_part().trainer_config
    validate_with_verl(trainer_config)  # level 2 in-process now that verl imports: refuse before Ray starts
    workflow_class = load_object(WORKFLOW_CLASS_PATH, "the rLLM Workflow")
    from terminal_agent.rollout.episode_batch import LeakSweeper
    from terminal_agent.rollout.episode_spec import EpisodeSpec
    from terminal_agent.sandbox.backends import close_backends

    # the leak policy of every run: each registered backend sweeps its own leaks on this node, now and while it lasts
    sweeper = LeakSweeper(config=EpisodeSpec.among_workflow_args(plan.workflow_args).env.sandbox).start()
    try:
        write_parquet_files(plan)
        point_verl_at_rllm_ready_model(plan)
        os.environ.update(run_environment(preset))  # the driver reads them too (tokenizer, file logger)
        import ray
        from rllm.trainer.agent_trainer import AgentTrainer
        from rllm.trainer.verl.ray_runtime_env import get_ppo_ray_runtime_env

        if not ray.is_initialized():
            ray.init(runtime_env=ray_runtime_env(preset, get_ppo_ray_runtime_env()),
                     **ray_init_arguments(trainer_config, rehearse=rehearse, gpus=preset.cluster.total_gpus))
        check_ray_cluster(preset)
        check_sandbox_slots(preset)
        trainer = AgentTrainer(workflow_class=workflow_class, workflow_args=plan.workflow_args,
                               config=trainer_config, train_dataset=None, val_dataset=None, backend="verl")
        watchdog = start_stall_watchdog(plan)
        try:
            trainer.train()
        finally:
            if watchdog is not None:
                watchdog.stop()
    finally:
        sweeper.stop()
        close_backends()  # before Ray goes: the ray backend ends its host actors here


__all__ = [
    "RLLM_MODEL_DIR", "WORKFLOW_CLASS_PATH", "check_no_compaction", "effective_workflow_args",
    "hydra_key_sources", "launch_verl", "plan_verl", "point_verl_at_rllm_ready_model", "resolve_model_path",
    "start_stall_watchdog", "verl_dry_run_fields", "write_verl_launch_files",
]
