"""Difficulty screening: keep the tasks a model sometimes solves, freeze train / held-out splits.

``k`` attempts per task with a chosen model; a task whose pass count lies inside the band
(default 2..6 of 8) carries a learning signal for GRPO (always-pass and never-pass groups have
zero advantage). Every finished attempt is appended to ``attempts.jsonl`` (one JSON object a
line, flushed and fsynced), so an interrupted screening resumes without redoing finished
attempts. Attempts hit by infrastructure errors are journaled too but are redone on resume, and
attempts recorded for a different version of a task (its content hashes changed) are ignored.

Per task the summary also gives the group's reward spread (population std, min and max of its k
rewards) and whether the group is *all-equal*: k identical rewards (all 0, all 1, or all the same
partial credit) give every attempt zero advantage, so GRPO learns nothing from that task. Over all
complete groups it reports the share of all-equal groups (``share_all_equal``): the part of a
training batch that would carry no signal for this model.

The kept tasks are split deterministically (by a hash of seed and task id) into ``train.json``
and ``held_out.json`` manifests that record each task's content hashes; a manifest that already
exists is never overwritten with a different split unless asked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelClient
from terminal_agent.evaluation.results import TrialResult
from terminal_agent.rollout.runner import ProgressCallback, RolloutConfig, RolloutRunner, TrialSpec
from terminal_agent.tasks.model import Task

logger = logging.getLogger(__name__)

JOURNAL_FILE = "attempts.jsonl"
SCREENING_FILE = "screening.json"
TRAIN_FILE = "train.json"
HELD_OUT_FILE = "held_out.json"
MANIFEST_VERSION = 1


class ScreeningConfig(BaseModel):
    """How tasks are screened and split."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(8, ge=1)
    """Attempts per task (k)."""
    band: tuple[int, int] = (2, 6)
    """Inclusive pass-count band of kept tasks."""
    held_out_fraction: float = Field(0.2, ge=0.0, lt=1.0)
    """Share of kept tasks put in the held-out split."""
    seed: int = 0
    """Seed of the split's hash order."""
    max_steps: int = Field(10, ge=1)
    """Model turns per episode."""
    concurrency: int = Field(2, ge=1)
    """Episodes at once."""
    sampling: dict[str, Any] = Field(default_factory=dict)
    """Sampling keywords of every model call (screening wants ``temperature`` > 0)."""
    episode_timeout_s: float | None = None
    """Wall clock per episode (``None``: from the task's limits)."""
    overwrite_splits: bool = False
    """Replace existing split manifests that differ from the new split."""

    @field_validator("band")
    @classmethod
    def _ordered(cls, band: tuple[int, int]) -> tuple[int, int]:
        low, high = band
        if not 0 <= low <= high:
            raise ValueError(f"band {low}..{high} must satisfy 0 <= low <= high")
        return band


def parse_band(text: str) -> tuple[int, int]:
    """``"2..6"`` -> (2, 6); also accepts ``2-6`` and ``2,6``."""
    for separator in ("..", "-", ","):
        if separator in text:
            low, high = text.split(separator, 1)
            try:
                return int(low), int(high)
            except ValueError:
                break
    raise ConfigError(f"band {text!r} must look like LOW..HIGH, e.g. 2..6")


class TaskScreening(BaseModel):
    """Pass counts of one task."""

    task_id: str
    attempts: int
    """Scored attempts."""
    passes: int
    errors: int
    """Attempts not scored (infrastructure errors) in the journal for this task version."""
    mean_reward: float | None
    reward_std: float | None = None
    """Population standard deviation of the scored rewards (what GRPO normalises advantages by)."""
    reward_min: float | None = None
    reward_max: float | None = None
    all_equal: bool | None = None
    """All k rewards are equal (no GRPO signal); ``None`` while the group is incomplete."""
    kept: bool
    complete: bool
    """All k attempts are scored."""
    hashes: dict[str, str]


class AttemptJournal:
    """Append-only JSON-lines record of finished attempts; safe to append from several threads."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        entries = []
        with self.path.open() as handle:
            for number, line in enumerate(handle, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    entries.append(json.loads(line))
                except json.JSONDecodeError:
                    # the last line of an interrupted write; everything before it is intact
                    logger.warning("%s:%d is not complete JSON; ignoring it", self.path, number)
        return entries

    def append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as handle:
                if handle.tell() > 0:
                    # a crash mid-write leaves a partial last line: start on a fresh line
                    with self.path.open("rb") as reader:
                        reader.seek(-1, os.SEEK_END)
                        if reader.read(1) != b"\n":
                            line = "\n" + line
                handle.write(line.encode())
                handle.flush()
                os.fsync(handle.fileno())


def _task_version(task: Task) -> str:
    return hashlib.sha256(json.dumps(task.content_hashes(), sort_keys=True).encode()).hexdigest()[:16]


def finished_attempts(entries: list[dict[str, Any]], tasks: Sequence[Task], model: str) -> dict[str, dict[int, dict[str, Any]]]:
    """task id -> attempt -> the journal entry of its *scored* result for the task's current version."""
    versions = {task.task_id: _task_version(task) for task in tasks}
    done: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for entry in entries:
        task_id = entry.get("task_id")
        if task_id not in versions or entry.get("task_version") != versions[task_id]:
            continue
        if entry.get("model") != model:
            raise ConfigError(
                f"the journal holds attempts of model {entry.get('model')!r}, not {model!r}: "
                "use a new output directory for another model"
            )
        if entry.get("status") == "scored":
            done[task_id][int(entry["attempt"])] = entry
    return done


EQUAL_TOLERANCE = 1e-9
"""Rewards closer than this count as equal."""


class RewardSpread(NamedTuple):
    """The spread of a group's rewards."""

    mean: float
    std: float
    """Population standard deviation."""
    min: float
    max: float


def reward_spread(rewards: Sequence[float]) -> RewardSpread | None:
    """``mean``, population ``std``, ``min`` and ``max`` of a group's rewards (``None`` when empty)."""
    if not rewards:
        return None
    mean = sum(rewards) / len(rewards)
    std = (sum((r - mean) ** 2 for r in rewards) / len(rewards)) ** 0.5
    return RewardSpread(mean=mean, std=std, min=min(rewards), max=max(rewards))


def share_all_equal(rows: Sequence[TaskScreening]) -> tuple[int, int, float | None]:
    """(all-equal groups, complete groups, their share); the share is ``None`` when no group is complete."""
    complete = [row for row in rows if row.all_equal is not None]
    equal = sum(1 for row in complete if row.all_equal)
    return equal, len(complete), (equal / len(complete) if complete else None)


def split_kept(task_ids: Sequence[str], held_out_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Deterministic split: order by sha256(seed:task_id), the first share goes to held-out."""
    ordered = sorted(task_ids, key=lambda t: hashlib.sha256(f"{seed}:{t}".encode()).hexdigest())
    n_held = round(len(ordered) * held_out_fraction)
    if held_out_fraction > 0 and n_held == 0 and len(ordered) >= 2:
        n_held = 1
    return sorted(ordered[n_held:]), sorted(ordered[:n_held])


def screen_tasks(
    tasks: Sequence[Task],
    model: ModelClient,
    output_dir: Path,
    config: ScreeningConfig | None = None,
    *,
    tasks_file: str | None = None,
    on_progress: ProgressCallback | None = None,
    runner_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Screen ``tasks``; write the journal, ``screening.json`` and the split manifests; return the summary."""
    config = config or ScreeningConfig()
    output_dir.mkdir(parents=True, exist_ok=True)
    journal = AttemptJournal(output_dir / JOURNAL_FILE)
    done = finished_attempts(journal.read(), tasks, model.name)
    versions = {task.task_id: _task_version(task) for task in tasks}
    todo = [
        TrialSpec(task, attempt)
        for task in tasks
        for attempt in range(config.attempts)
        if attempt not in done.get(task.task_id, {})
    ]
    logger.info("screening: %d attempts to run, %d already in the journal", len(todo), sum(len(v) for v in done.values()))

    if todo:
        def record(trial: TrialResult) -> None:
            entry = trial.model_dump(mode="json")
            entry.update(model=model.name, task_version=versions[trial.task_id])
            journal.append(entry)

        rollout = RolloutConfig(
            attempts=config.attempts,
            max_steps=config.max_steps,
            concurrency=config.concurrency,
            sampling=config.sampling,
            episode_timeout_s=config.episode_timeout_s,
            output_dir=output_dir / "episodes",
        )
        runner = RolloutRunner(model, rollout, on_progress=on_progress, **(runner_options or {}))
        runner.run_trials(todo, tasks_file=tasks_file, on_trial=record)

    entries = journal.read()
    done = finished_attempts(entries, tasks, model.name)
    errors: dict[str, int] = defaultdict(int)
    for entry in entries:
        if entry.get("status") != "scored" and versions.get(entry.get("task_id", "")) == entry.get("task_version"):
            errors[entry["task_id"]] += 1
    rows: list[TaskScreening] = []
    low, high = config.band
    for task in tasks:
        attempts = [a for a in done.get(task.task_id, {}).values() if a["attempt"] < config.attempts]
        passes = sum(1 for a in attempts if (a.get("reward") or 0.0) >= 1.0 - 1e-9)
        complete = len(attempts) >= config.attempts
        rewards = [float(a.get("reward") or 0.0) for a in attempts]
        spread = reward_spread(rewards)
        rows.append(
            TaskScreening(
                task_id=task.task_id,
                attempts=len(attempts),
                passes=passes,
                errors=errors.get(task.task_id, 0),
                mean_reward=spread.mean if spread is not None else None,
                reward_std=spread.std if spread is not None else None,
                reward_min=spread.min if spread is not None else None,
                reward_max=spread.max if spread is not None else None,
                all_equal=(spread.max - spread.min <= EQUAL_TOLERANCE) if complete and spread is not None else None,
                kept=complete and low <= passes <= high,
                complete=complete,
                hashes=task.content_hashes(),
            )
        )
    kept = [row.task_id for row in rows if row.kept]
    train, held_out = split_kept(kept, config.held_out_fraction, config.seed)
    by_id = {row.task_id: row for row in rows}
    created = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    common = {
        "manifest_version": MANIFEST_VERSION,
        "model": model.name,
        "attempts": config.attempts,
        "band": list(config.band),
        "seed": config.seed,
        "held_out_fraction": config.held_out_fraction,
        "tasks_file": tasks_file,
    }
    for name, ids in ((TRAIN_FILE, train), (HELD_OUT_FILE, held_out)):
        manifest = {
            **common,
            "split": name.removesuffix(".json"),
            "created_at": created,
            "tasks": [{"task_id": t, "passes": by_id[t].passes, "hashes": by_id[t].hashes} for t in ids],
        }
        _write_frozen(output_dir / name, manifest, config.overwrite_splits)
    n_equal, n_complete, share = share_all_equal(rows)
    summary = {
        **common,
        "created_at": created,
        "n_tasks": len(rows),
        "n_kept": len(kept),
        "n_incomplete": sum(1 for row in rows if not row.complete),
        "n_all_equal": n_equal,
        "n_complete": n_complete,
        "share_all_equal": share,
        "train": train,
        "held_out": held_out,
        "tasks": [row.model_dump() for row in rows],
    }
    (output_dir / SCREENING_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _split_identity(manifest: dict[str, Any]) -> Any:
    return [(t["task_id"], t["hashes"]) for t in manifest["tasks"]], manifest.get("model"), manifest.get("band")


def _write_frozen(path: Path, manifest: dict[str, Any], overwrite: bool) -> None:
    if path.exists():
        old = json.loads(path.read_text())
        if _split_identity(old) == _split_identity(manifest):
            return  # same split: keep the original file (and its created_at) untouched
        if not overwrite:
            raise ConfigError(
                f"{path} already holds a different frozen split; pass --overwrite-splits to replace it "
                "or screen into another directory"
            )
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    tmp.replace(path)


def verify_split(manifest_path: Path, tasks: Sequence[Task]) -> list[str]:
    """Problems with a frozen split against the current tasks: missing tasks or changed hashes."""
    manifest = json.loads(Path(manifest_path).read_text())
    by_id = {task.task_id: task for task in tasks}
    problems = []
    for entry in manifest["tasks"]:
        task = by_id.get(entry["task_id"])
        if task is None:
            problems.append(f"{entry['task_id']}: missing")
            continue
        changed = [key for key, value in task.content_hashes().items() if entry["hashes"].get(key) != value]
        if changed:
            problems.append(f"{entry['task_id']}: changed {', '.join(changed)}")
    return problems
