"""The learning experiment over several seeds, and its pooled analysis.

Each seed runs :func:`~terminal_agent.training.experiments.local_experiment.run_learning_experiment` in its own
directory, with ``LocalTrainingConfig.seed`` set to it. That seed orders the train tasks, initialises
LoRA and seeds the trainer's sampling, and, because
:func:`~terminal_agent.training.local.policy.load_policy` seeds torch with it, it also seeds the
evaluations' samplers (the base, warm-start and trained evaluations of one seed draw the same
per-call seeds; another seed draws others). Layout::

    seed_0/ ... seed_N/   one learning experiment each (train/, eval_*/, comparison.md, splits.json)
                          plus experiment.json: the settings it ran with
    pooled.md / pooled.json  per seed and pooled over seeds and tasks (tasks resampled within seeds,
                          :mod:`~terminal_agent.evaluation.pooled_bootstrap`): trained vs base, trained vs
                          warm start (GRPO's own effect) and warm start vs base, on reward and on pass, for
                          all held-out tasks, the held-out family instances and the hand-written tasks

A seed whose directory already holds finished results (its ``comparison.json`` and evaluations) is
skipped, so the seeds can be spread over several invocations; an unfinished one is run again (its
training resumes after its latest checkpoint). The pooled analysis always covers every finished seed
directory present, and notes settings that differ between seeds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.tasks.model import Task
from terminal_agent.training.experiments.local_experiment import COMPARISONS, ExperimentResult, run_learning_experiment
from terminal_agent.training.local.config import LocalTrainingConfig
from terminal_agent.training.local.trainer import TrainingProgress

SEED_DIR_PREFIX = "seed_"
SETTINGS_FILE = "experiment.json"
POOLED_MARKDOWN = "pooled.md"
POOLED_JSON = "pooled.json"
EVAL_DIRS = {"base": "eval_base", "warm_start": "eval_warm_start", "trained": "eval_trained"}
"""Model -> the evaluation directory :func:`run_learning_experiment` writes (its module docstring)."""
FAMILY_GROUP = "held-out family instances"
HAND_WRITTEN_GROUP = "hand-written held-out tasks"
POOLED_COMPARISONS = tuple((f"{b}_vs_{a}", title, a, b) for _, title, a, b in COMPARISONS)
"""``(key, title, a, b)``: trained_vs_base, trained_vs_warm_start, warm_start_vs_base."""
_NOT_COMPARED = ("seed", "config.seed", "config.experiment")
"""Settings (dotted) that differ between seeds on purpose."""
TREND_WINDOW = 10
"""Steps at each end of a seed's training that :func:`training_trend` averages."""
_FAMILY_TASK_ID = re.compile(r"^gen-(?P<family>[a-z0-9-]+)-[0-9a-f]{10}$")
"""The id of a family instance (``TaskFamily.instance``: ``gen-<family>-<10 hex digits>``)."""


def parse_seeds(text: str) -> list[int]:
    """``"0,1,2"`` -> ``[0, 1, 2]``; ConfigError for anything but distinct non-negative integers."""
    parts = [part.strip() for part in str(text).split(",")]
    if not all(part.isdigit() for part in parts):
        raise ConfigError(f"--seeds takes distinct non-negative integers separated by commas (e.g. 0,1,2), got {text!r}")
    seeds = [int(part) for part in parts]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds names a seed twice: {text!r}")
    return seeds


def seed_dir(out_dir: Path, seed: int) -> Path:
    return Path(out_dir) / f"{SEED_DIR_PREFIX}{seed}"


def family_of_task_id(task_id: str) -> str | None:
    """The family a task id is an instance of, or ``None`` for a hand-written task.

    Family instances are ``gen-<family>-<digest>`` for a registered family (the same tasks carry
    ``metadata["family"]``, the rule :mod:`~terminal_agent.task_quality.splits` uses); results files keep
    only the id, so the id decides here.
    """
    from terminal_agent.tasks.families import FAMILIES

    match = _FAMILY_TASK_ID.match(task_id)
    if match is None or match["family"] not in FAMILIES:
        return None
    return match["family"]


def is_family_instance(task_id: str) -> bool:
    return family_of_task_id(task_id) is not None


def check_task_groups(tasks: Sequence[Task]) -> None:
    """ConfigError when a task's id and its metadata disagree on whether it is a family instance
    (a hand-written task named like one, or an instance renamed), so the tables never misfile it."""
    wrong = [task.task_id for task in tasks if is_family_instance(task.task_id) != ("family" in task.metadata)]
    if wrong:
        raise ConfigError("these held-out task ids do not tell family instances (gen-<family>-<digest>, with "
                          f"metadata family) from hand-written tasks: {', '.join(sorted(wrong)[:5])}")


def seed_is_finished(directory: Path) -> bool:
    """Whether a seed's directory holds a finished experiment (written last: comparison.json)."""
    directory = Path(directory)
    return (directory / "comparison.json").is_file() and all(
        (directory / EVAL_DIRS[model] / "results.json").is_file() for model in ("base", "trained"))


def seed_directories(out_dir: Path) -> dict[int, Path]:
    """Seed -> its directory, for every ``seed_<N>`` directory in ``out_dir``, by seed."""
    found: dict[int, Path] = {}
    if Path(out_dir).is_dir():
        for path in Path(out_dir).iterdir():
            suffix = path.name.removeprefix(SEED_DIR_PREFIX)
            if path.is_dir() and path.name.startswith(SEED_DIR_PREFIX) and suffix.isdigit():
                found[int(suffix)] = path
    return dict(sorted(found.items()))


def experiment_settings(config: LocalTrainingConfig, train_tasks: Sequence[Task], held_out_tasks: Sequence[Task],
                        **evaluation: Any) -> dict[str, Any]:
    """What one seed's experiment ran with: the trainer config, the evaluation settings, the task sets' hashes."""
    from terminal_agent.task_quality.splits import canonical_sha256

    train_ids = sorted(t.task_id for t in train_tasks)
    held_ids = sorted(t.task_id for t in held_out_tasks)
    return {
        "seed": config.seed,
        "config": config.run_record(),
        "evaluation": evaluation,
        "train_tasks": {"count": len(train_ids), "ids_sha256": canonical_sha256(train_ids)},
        "held_out_tasks": {"count": len(held_ids), "ids_sha256": canonical_sha256(held_ids)},
    }


def read_settings(directory: Path) -> dict[str, Any] | None:
    """A seed directory's recorded settings; ``None`` when it has none (or they are unreadable)."""
    try:
        settings = json.loads((Path(directory) / SETTINGS_FILE).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return settings if isinstance(settings, dict) else None


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def settings_differences(by_seed: Mapping[str, Mapping[str, Any] | None]) -> dict[str, dict[str, Any]]:
    """Dotted setting -> seed -> value, for the settings whose values are not the same for every seed
    (the seed and the experiment name aside). Seeds without recorded settings are left out."""
    flat = {label: _flatten(settings) for label, settings in by_seed.items() if settings is not None}
    keys = sorted({key for values in flat.values() for key in values})
    differences: dict[str, dict[str, Any]] = {}
    for key in keys:
        if key in _NOT_COMPARED:
            continue
        values = {label: values.get(key) for label, values in flat.items()}
        if len({json.dumps(v, sort_keys=True, default=str) for v in values.values()}) > 1:
            differences[key] = values
    return differences


def read_training_metrics(directory: Path) -> dict[int, dict[str, Any]]:
    """Step -> the trainer's metrics record of a seed directory (``train/metrics.jsonl``, or a stored
    copy's ``metrics.jsonl``). A step recorded twice (it was redone after a resume) keeps its last
    record; unreadable lines are skipped. Empty when there is no metrics file."""
    directory = Path(directory)
    path = next((p for p in (directory / "train" / "metrics.jsonl", directory / "metrics.jsonl") if p.is_file()), None)
    steps: dict[int, dict[str, Any]] = {}
    if path is None:
        return steps
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            steps[record["step"]] = record
    return steps


def training_trend(directory: Path, window: int = TREND_WINDOW) -> dict[str, Any] | None:
    """The on-policy train reward and pass rate over a seed's first and last ``window`` steps, with the
    optimizer steps taken and skipped and the groups kept; ``None`` without training metrics."""
    steps = read_training_metrics(directory)
    if not steps:
        return None
    order = sorted(steps)
    first, last = [steps[s] for s in order[:window]], [steps[s] for s in order[-window:]]

    def mean(records: list[dict[str, Any]], key: str) -> float | None:
        values = [float(r[key]) for r in records if isinstance(r.get(key), (int, float))]
        return sum(values) / len(values) if values else None

    def total(key: str) -> int:
        return int(sum(r.get(key) or 0 for r in steps.values()))

    return {
        "steps": len(order), "first_steps": [order[0], order[min(window, len(order)) - 1]],
        "last_steps": [order[max(0, len(order) - window)], order[-1]],
        "reward": {"first": mean(first, "rollout/reward_mean"), "last": mean(last, "rollout/reward_mean")},
        "pass": {"first": mean(first, "rollout/pass_rate"), "last": mean(last, "rollout/pass_rate")},
        "optimizer_steps": total("update/stepped"), "skipped_steps": total("update/skipped_steps"),
        "groups_kept": total("batch/groups_kept"), "groups": total("batch/groups"),
    }


def _trend_markdown(trends: Mapping[str, dict[str, Any] | None]) -> str:
    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = ["", "## Training (on-policy, train tasks)", "",
             "| seed | steps | reward, first -> last steps | pass, same | optimizer steps (skipped) | groups kept |",
             "| --- | --- | --- | --- | --- | --- |"]
    for seed, trend in trends.items():
        if trend is None:
            lines.append(f"| {seed} | no metrics | - | - | - | - |")
            continue
        a, b = trend["first_steps"], trend["last_steps"]
        lines.append(
            f"| {seed} | {trend['steps']} | {num(trend['reward']['first'])} -> {num(trend['reward']['last'])}"
            f" (steps {a[0]}-{a[1]} -> {b[0]}-{b[1]}) | {num(trend['pass']['first'])} -> {num(trend['pass']['last'])}"
            f" | {trend['optimizer_steps']} ({trend['skipped_steps']}) | {trend['groups_kept']} / {trend['groups']} |")
    return "\n".join(lines) + "\n"


@dataclass
class PooledResult:
    """The pooled analysis of every finished seed directory."""

    seeds: list[int]
    """The finished seeds it covers."""
    unfinished: list[int]
    """Seed directories present but not finished (left out)."""
    document: dict[str, Any]
    """What pooled.json holds (:func:`~terminal_agent.evaluation.pooled_bootstrap.pooled_analysis`, plus
    ``unfinished_seeds``, ``settings_differences`` and ``training``: :func:`training_trend` per seed)."""
    markdown: str
    """What pooled.md holds."""


@dataclass
class SeedExperimentResult:
    """What one invocation ran, skipped and pooled."""

    out_dir: Path
    experiments: dict[int, ExperimentResult]
    """The seeds run now, with their results."""
    skipped: dict[int, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """Seeds skipped for finished results -> the settings they ran with that differ from this invocation's
    (``setting -> {"recorded": ..., "now": ...}``; empty when the same)."""
    pooled: PooledResult | None = None


def pool_seed_directories(out_dir: Path, *, n_boot: int = 10_000, confidence: float = 0.95) -> PooledResult:
    """Pool every finished ``seed_<N>`` directory of ``out_dir``; writes pooled.md and pooled.json there.

    Raises ConfigError when no seed directory is finished."""
    from terminal_agent.evaluation.pooled_bootstrap import pooled_analysis, pooled_markdown
    from terminal_agent.evaluation.results import RunResults

    out_dir = Path(out_dir)
    directories = seed_directories(out_dir)
    finished = {seed: path for seed, path in directories.items() if seed_is_finished(path)}
    unfinished = [seed for seed in directories if seed not in finished]
    if not finished:
        raise ConfigError(f"no finished seed directory ({SEED_DIR_PREFIX}N/comparison.json) in {out_dir}")
    runs = {
        str(seed): {model: RunResults.read(path / sub / "results.json")
                    for model, sub in EVAL_DIRS.items() if (path / sub / "results.json").is_file()}
        for seed, path in finished.items()
    }
    groups = {FAMILY_GROUP: is_family_instance, HAND_WRITTEN_GROUP: lambda task_id: not is_family_instance(task_id)}
    document = pooled_analysis(runs, POOLED_COMPARISONS, groups, confidence=confidence, n_boot=n_boot)
    differences = settings_differences({str(seed): read_settings(path) for seed, path in finished.items()})
    document["unfinished_seeds"] = unfinished
    document["settings_differences"] = differences
    trends = {str(seed): training_trend(path) for seed, path in finished.items()}
    document["training"] = trends
    markdown = pooled_markdown(document, title="The learning experiment over seeds") + _trend_markdown(trends)
    notes = []
    if unfinished:
        notes.append(f"- Left out, not finished: {', '.join(f'{SEED_DIR_PREFIX}{s}' for s in unfinished)}.")
    for key, values in differences.items():
        notes.append(f"- Setting `{key}` differs: " + ", ".join(f"seed {s} = {v!r}" for s, v in values.items()) + ".")
    if notes:
        markdown += "\n## Notes\n\n" + "\n".join(notes) + "\n"
    (out_dir / POOLED_JSON).write_text(json.dumps(document, indent=2, default=str) + "\n")
    (out_dir / POOLED_MARKDOWN).write_text(markdown)
    return PooledResult(list(finished), unfinished, document, markdown)


def run_seed_experiments(
    config: LocalTrainingConfig,
    train_tasks: Sequence[Task],
    held_out_tasks: Sequence[Task],
    out_dir: Path,
    *,
    seeds: Sequence[int],
    eval_attempts: int = 4,
    eval_temperature: float = 0.6,
    eval_concurrency: int = 4,
    progress: TrainingProgress | None = None,
    on_eval_progress: Any = None,
    n_boot: int = 10_000,
) -> SeedExperimentResult:
    """Run the learning experiment once per seed not yet finished, then pool every finished seed
    (see the module docstring). ``config.seed`` is replaced by each seed."""
    seeds = list(seeds)
    if not seeds:
        raise ConfigError("no seeds to run")
    if len(set(seeds)) != len(seeds) or any(seed < 0 for seed in seeds):
        raise ConfigError(f"seeds must be distinct non-negative integers, got {seeds}")
    check_task_groups(held_out_tasks)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    evaluation = {"attempts": eval_attempts, "temperature": eval_temperature}
    result = SeedExperimentResult(out_dir, {})
    for seed in seeds:
        directory = seed_dir(out_dir, seed)
        seeded = config.model_copy(update={"seed": seed, "experiment": f"{config.experiment}-seed{seed}"})
        settings = experiment_settings(seeded, train_tasks, held_out_tasks, **evaluation)
        if seed_is_finished(directory):
            differences = settings_differences({"recorded": read_settings(directory), "now": settings})
            result.skipped[seed] = differences
            if progress is not None:
                progress.message(f"seed {seed}: finished results in {directory}, skipped")
            continue
        directory.mkdir(parents=True, exist_ok=True)
        (directory / SETTINGS_FILE).write_text(json.dumps(settings, indent=2) + "\n")
        if progress is not None:
            progress.message(f"seed {seed}: the learning experiment in {directory}")
        result.experiments[seed] = run_learning_experiment(
            seeded, train_tasks, held_out_tasks, directory, eval_attempts=eval_attempts,
            eval_temperature=eval_temperature, eval_concurrency=eval_concurrency, progress=progress,
            on_eval_progress=on_eval_progress, n_boot=n_boot,
        )
    result.pooled = pool_seed_directories(out_dir, n_boot=n_boot)
    return result


__all__ = [
    "EVAL_DIRS", "FAMILY_GROUP", "HAND_WRITTEN_GROUP", "POOLED_JSON", "POOLED_MARKDOWN", "PooledResult",
    "SeedExperimentResult", "check_task_groups", "experiment_settings", "family_of_task_id", "is_family_instance",
    "parse_seeds", "pool_seed_directories", "read_settings", "read_training_metrics", "run_seed_experiments",
    "seed_directories", "seed_dir", "seed_is_finished", "settings_differences", "training_trend",
]
