"""An eval run's directory as a Harbor job: written live by ``eval run``, or converted from a finished run.

The run directory itself is the job folder (``results.json``, ``transcripts/`` and ``report.md`` stay beside
Harbor's ``config.json``, ``result.json`` and the trial folders ``TASK__attempt-N/``), so a directory of runs is
a Harbor jobs directory: ``harbor view runs/`` lists every run.

Both paths build each trial from the same record: the transcript the runner wrote and the trial's entry of
``results.json`` (:func:`~terminal_agent.harbor_jobs.records.record_from_transcript`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terminal_agent.evaluation.results import RunResults, TrialResult
from terminal_agent.harbor_jobs.job_files import HarborJobSettings, HarborJobWriter
from terminal_agent.harbor_jobs.records import record_from_transcript

if TYPE_CHECKING:  # the runner calls back into this module: a type only
    from terminal_agent.rollout.runner import TrialSpec

logger = logging.getLogger(__name__)


def source_label(tasks_file: str | None) -> str | None:
    """The dataset label of a run: its tasks file's (or folder's) name."""
    return Path(tasks_file).name if tasks_file else None


def settings_for_run(results: RunResults, output_dir: Path, n_total_trials: int) -> HarborJobSettings:
    run = results.run
    started = _parse_time(run.started_at) or dt.datetime.now(dt.timezone.utc)
    return HarborJobSettings(
        job_name=Path(output_dir).name,
        model_name=run.model,
        n_total_trials=n_total_trials,
        started_at=started,
        n_attempts=run.attempts,
        n_concurrent_trials=run.concurrency,
        source=source_label(run.tasks_file),
        dataset_path=run.tasks_file,
        agent_kwargs={"max_steps": run.max_steps, "sampling": dict(run.sampling)},
        sandbox_backend=run.sandbox_backend,
        run_id=run.run_id,
    )


class EvalHarborJob:
    """The live writer of an ``eval run``: pass :meth:`on_transcript` to the runner, call :meth:`finish` after."""

    def __init__(self, output_dir: Path, settings: HarborJobSettings):
        self.output_dir = Path(output_dir)
        self.writer = HarborJobWriter(self.output_dir, settings)
        self.writer.start()
        self.failures: list[str] = []

    @classmethod
    def for_run(cls, output_dir: Path, *, run_id: str, model: str, tasks_file: str | None, attempts: int, max_steps: int,
                concurrency: int, sampling: dict[str, Any], sandbox_backend: str | None, n_total_trials: int) -> "EvalHarborJob":
        return cls(output_dir, HarborJobSettings(
            job_name=Path(output_dir).name, model_name=model, n_total_trials=n_total_trials,
            started_at=dt.datetime.now(dt.timezone.utc), n_attempts=attempts, n_concurrent_trials=concurrency,
            source=source_label(tasks_file), dataset_path=tasks_file,
            agent_kwargs={"max_steps": max_steps, "sampling": dict(sampling)}, sandbox_backend=sandbox_backend, run_id=run_id,
        ))

    def on_transcript(self, spec: TrialSpec, trial: TrialResult, transcript: dict[str, Any]) -> None:
        finished = dt.datetime.now(dt.timezone.utc)
        record = record_from_transcript(
            transcript, trial, started_at=finished - dt.timedelta(seconds=trial.wall_s), finished_at=finished,
            metadata={"run_id": self.writer.settings.run_id}, source=self.writer.settings.source,
        )
        try:
            self.writer.add(record)
        except OSError as exc:  # a full or read-only disk costs the viewer this trial, never the evaluation
            self.failures.append(f"{record.trial_name}: {exc}")
            logger.warning("could not write Harbor trial %s: %s", record.trial_name, exc)

    def finish(self, results: RunResults) -> None:
        self.writer.finish(headline_metrics(results))


def headline_metrics(results: RunResults) -> dict[str, float] | None:
    """The run's mean reward and pass rate as ``eval report`` computes them (task means), for the job's result;
    None when the summary has neither."""
    summary = results.summary or {}
    metrics: dict[str, float] = {}
    for key, name in (("mean_reward", "mean"), ("pass_rate", "pass_rate")):
        value = (summary.get(key) or {}).get("value") if isinstance(summary.get(key), dict) else None
        if isinstance(value, (int, float)) and value == value:
            metrics[name] = float(value)
    return metrics or None


def convert_run(run_dir: Path) -> tuple[Path, int, list[str]]:
    """Write the Harbor job layout into an eval run made before it existed.

    Returns the job folder, the trials written and the problems met (a missing or unreadable transcript: that
    trial is written from ``results.json`` alone, without its model calls). Trial timestamps are the run's start
    plus each trial's wall time (older results keep no per-trial clock); a ConfigError for a folder that is
    not a run.
    """
    run_dir = Path(run_dir)
    results = RunResults.read(run_dir)
    writer = HarborJobWriter(run_dir, settings_for_run(results, run_dir, len(results.trials)))
    writer.start()
    started = writer.settings.started_at
    problems: list[str] = []
    for trial in results.trials:
        transcript: dict[str, Any] = {"model": results.run.model}
        if trial.transcript:
            try:
                loaded = json.loads((run_dir / trial.transcript).read_text())
                transcript = loaded if isinstance(loaded, dict) else transcript
            except (OSError, ValueError) as exc:  # one bad transcript leaves its trial without calls, not the run
                problems.append(f"{trial.transcript}: {exc}")
        else:
            problems.append(f"{trial.task_id} attempt {trial.attempt}: no transcript")
        record = record_from_transcript(
            transcript, trial, started_at=started, finished_at=started + dt.timedelta(seconds=trial.wall_s),
            metadata={"run_id": results.run.run_id, "converted": True}, source=writer.settings.source,
        )
        writer.add(record)
    writer.finish(headline_metrics(results))
    return run_dir, len(results.trials), problems


def is_eval_run(path: Path) -> bool:
    return (Path(path) / "results.json").is_file()


def _parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


__all__ = ["EvalHarborJob", "convert_run", "headline_metrics", "is_eval_run", "settings_for_run", "source_label"]
