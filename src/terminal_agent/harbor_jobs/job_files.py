"""A Harbor 0.25 job folder: ``config.json`` (``JobConfig``), ``result.json`` (``JobResult``) and one folder per trial.

:class:`HarborJobWriter` writes the config when the job starts, each trial as it ends, and the job's result with
its running stats (completed, errored, rewards per trial, exceptions by type, tokens) after trials (at most once
a second while trials stream in) and at the end. The result leaves out ``trial_results``, as Harbor's own jobs
do: the trials' folders hold them.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terminal_agent.harbor_jobs.atif import AGENT_NAME
from terminal_agent.harbor_jobs.records import HarborTrialRecord
from terminal_agent.harbor_jobs.trial_files import stable_uuid, write_json, write_trial

RESULT_WRITE_INTERVAL_S = 1.0
"""Least seconds between two rewrites of the job's ``result.json`` while trials stream in."""


@dataclass
class HarborJobSettings:
    """What the job's ``config.json`` says and every trial shares."""

    job_name: str
    """The job's folder name (an eval run: its output directory's name)."""
    model_name: str
    """The model client's name."""
    n_total_trials: int
    """Trials the job will have (attempts x tasks)."""
    started_at: dt.datetime
    n_attempts: int = 1
    n_concurrent_trials: int = 1
    source: str | None = None
    """Label of the task source (the tasks file's name); the viewer groups and filters by it."""
    dataset_path: str | None = None
    """Where the tasks came from."""
    agent_kwargs: dict[str, Any] = field(default_factory=dict)
    """The agent's settings (max steps, sampling), shown in every trial's config."""
    sandbox_backend: str | None = "docker"
    run_id: str | None = None
    """Our run id; the job's UUID derives from it."""


class HarborJobWriter:
    """Writes one job folder; see the module docstring. Safe to call from several threads."""

    def __init__(self, job_dir: Path, settings: HarborJobSettings):
        self.job_dir = Path(job_dir)
        self.settings = settings
        self.job_id = stable_uuid(settings.run_id or settings.job_name)
        self.environment = (
            {"type": "docker"} if settings.sandbox_backend in (None, "docker")
            else {"import_path": f"terminal_agent.sandbox:{settings.sandbox_backend}", "type": None}
        )
        self._lock = threading.Lock()
        self._completed = 0
        self._errored = 0
        self._scored_rewards: list[float] = []
        self._passed = 0
        self._reward_stats: dict[str, dict[float, list[str]]] = {}
        self._exception_stats: dict[str, list[str]] = {}
        self._input_tokens = 0
        self._output_tokens = 0
        self._last_write = 0.0
        self._finished_at: dt.datetime | None = None
        self._metrics: dict[str, Any] | None = None

    # --- the job ---------------------------------------------------------------------------------------
    def job_config(self) -> dict[str, Any]:
        s = self.settings
        return {
            "job_name": s.job_name,
            "jobs_dir": str(self.job_dir.parent),
            "n_attempts": s.n_attempts,
            "n_concurrent_trials": s.n_concurrent_trials,
            "environment": self.environment,
            "agents": [{"name": AGENT_NAME, "model_name": s.model_name, "kwargs": s.agent_kwargs}],
            "datasets": [{"path": s.dataset_path}] if s.dataset_path else [],
        }

    def start(self) -> None:
        """Write ``config.json`` and an empty ``result.json``."""
        write_json(self.job_dir / "config.json", self.job_config())
        self._write_result()

    def add(self, record: HarborTrialRecord) -> dict[str, Any]:
        """Write a finished trial and count it; returns its ``result.json`` object."""
        result = write_trial(record, self.job_dir, self.job_id, agent_kwargs=self.settings.agent_kwargs,
                             environment=self.environment)
        with self._lock:
            self._count(record, result)
            if time.monotonic() - self._last_write >= RESULT_WRITE_INTERVAL_S:
                self._write_result()
        return result

    def finish(self, metrics: dict[str, Any] | None = None) -> None:
        """The job's last ``result.json``: ``finished_at`` and the headline ``metrics`` (else the mean reward)."""
        with self._lock:
            self._finished_at = dt.datetime.now(dt.timezone.utc)
            self._metrics = metrics
            self._write_result()

    # --- stats -------------------------------------------------------------------------------------------
    def _count(self, record: HarborTrialRecord, result: dict[str, Any]) -> None:
        self._completed += 1
        agent_result = result.get("agent_result") or {}
        self._input_tokens += int(agent_result.get("n_input_tokens") or 0)
        self._output_tokens += int(agent_result.get("n_output_tokens") or 0)
        if result.get("verifier_result"):
            for key, value in result["verifier_result"]["rewards"].items():
                self._reward_stats.setdefault(key, {}).setdefault(value, []).append(record.trial_name)
            reward = float(result["verifier_result"]["rewards"]["reward"])
            self._scored_rewards.append(reward)
            self._passed += int(reward >= 1.0 - 1e-9)
        if result.get("exception_info"):
            self._errored += 1
            self._exception_stats.setdefault(result["exception_info"]["exception_type"], []).append(record.trial_name)

    def _eval_key(self) -> str:
        model = self.settings.model_name
        provider, _, name = model.partition("/")
        model_label = name if name and " " not in provider else model
        return f"{AGENT_NAME}__{model_label}__{self.settings.source or 'adhoc'}"

    def job_result(self) -> dict[str, Any]:
        s = self.settings
        scored = len(self._scored_rewards)
        metrics = self._metrics
        if metrics is None:
            metrics = {"mean": sum(self._scored_rewards) / scored if scored else None,
                       "pass_rate": self._passed / scored if scored else None}
        now = dt.datetime.now(dt.timezone.utc)
        return {
            "id": self.job_id,
            "started_at": s.started_at.astimezone(dt.timezone.utc).isoformat(),
            "updated_at": now.isoformat(),
            "finished_at": self._finished_at.isoformat() if self._finished_at else None,
            "n_total_trials": s.n_total_trials,
            "stats": {
                "n_completed_trials": self._completed,
                "n_errored_trials": self._errored,
                "n_running_trials": 0,
                "n_pending_trials": max(0, s.n_total_trials - self._completed) if self._finished_at is None else 0,
                "evals": {
                    self._eval_key(): {
                        "n_trials": scored,
                        "n_errors": self._errored,
                        "metrics": [{k: v for k, v in metrics.items() if v is not None}] if any(v is not None for v in metrics.values()) else [],
                        "reward_stats": self._reward_stats,
                        "exception_stats": self._exception_stats,
                    }
                },
                "n_input_tokens": self._input_tokens,
                "n_output_tokens": self._output_tokens,
            },
        }

    def _write_result(self) -> None:
        write_json(self.job_dir / "result.json", self.job_result())
        self._last_write = time.monotonic()


__all__ = ["HarborJobSettings", "HarborJobWriter", "RESULT_WRITE_INTERVAL_S"]
