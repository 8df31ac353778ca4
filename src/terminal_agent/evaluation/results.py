"""The ``results.json`` of an evaluation run: one record per trial, errors kept apart from failures.

A trial is one attempt of one task. ``status`` is ``scored`` (``reward`` is the weighted test
score) or ``error`` (infrastructure broke: sandbox, image, provider, grading - ``reward`` is
``None``; such trials are excluded from pass rates and counted separately). ``termination_reason``
is a :class:`~terminal_agent.outcome.Termination` value, the same enum the env and the trainers use;
files written before it (``error``, ``wall_clock``) are read as the matching termination.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, model_validator

from terminal_agent.errors import ConfigError
from terminal_agent.outcome import Termination, TestVerdict

RESULTS_SCHEMA_VERSION = 1
_TERMINATION_VALUES = frozenset(t.value for t in Termination)
PASS_THRESHOLD = 1.0 - 1e-9
"""A trial passes when its reward reaches 1.0 (every declared test passed)."""


class TrialError(BaseModel):
    """Why a trial was not scored."""

    model_config = ConfigDict(extra="ignore")

    kind: str
    """Error family: ``sandbox``, ``image``, ``provider``, ``grading``, ``timeout``, ``internal`` ..."""
    message: str
    """Exception type and message, or what the episode reported."""


class TrialResult(BaseModel):
    """One attempt of one task."""

    # the termination is kept as its string value (reports and the JSON show ``max_steps``, not the enum)
    model_config = ConfigDict(extra="ignore", use_enum_values=True)

    task_id: str
    """Id of the task."""
    attempt: int
    """0-based attempt index within the task."""
    status: Literal["scored", "error"]
    """``scored``: graded; ``error``: infrastructure broke, excluded from rewards and pass rates."""
    reward: float | None = None
    """Weighted test score in [0, 1]; ``None`` when not scored."""
    tests: list[TestVerdict] = Field(default_factory=list)
    """Every declared test of the task with its verdict (empty when not graded); the file leaves the verdicts'
    messages out (:meth:`TestVerdict.to_info` ``with_message=False``), so a trial read back has empty ones."""
    turns: int = 0
    """Model calls made in the episode."""
    prompt_tokens: int = 0
    """Prompt tokens summed over the episode's model calls."""
    completion_tokens: int = 0
    """Completion tokens summed over the episode's model calls."""
    termination_reason: Termination
    """Why the episode ended (a :class:`Termination` value: ``finished``, ``max_steps``, ``sandbox_error``,
    ``episode_timeout`` ...); older files' ``error`` and ``wall_clock`` are read as their termination."""
    env_time_s: float = 0.0
    """Time spent in the environment (container start, commands, grading)."""
    model_time_s: float = 0.0
    """Time the model spent generating this trial's replies."""
    model_wait_s: float = 0.0
    """Time this trial queued for a shared model that runs one call at a time (the embedded model)."""
    wall_s: float = 0.0
    """Wall clock of the whole trial, queueing for the model lock included."""
    error: TrialError | None = None
    """Why the trial was not scored (``None`` when scored)."""
    transcript: str | None = None
    """Transcript file, relative to the results file's directory."""

    @field_serializer("tests")
    def _tests_without_messages(self, tests: list[TestVerdict]) -> list[dict[str, Any]]:
        return [test.to_info(with_message=False) for test in tests]

    @model_validator(mode="before")
    @classmethod
    def _read_legacy_termination(cls, data: Any) -> Any:
        """Old files' ``error`` (the error kind says which infrastructure) and ``wall_clock``; a missing or
        empty reason is ``finished`` for a scored trial and the error kind's termination otherwise."""
        if not isinstance(data, dict):
            return data
        reason = data.get("termination_reason", "")
        if isinstance(reason, str) and reason not in _TERMINATION_VALUES:
            error = data.get("error")
            kind = error.get("kind") if isinstance(error, dict) else getattr(error, "kind", None)
            if reason == "" and data.get("status") == "scored":
                data = {**data, "termination_reason": Termination.FINISHED.value}
            elif reason in ("", "error", "wall_clock"):
                data = {**data, "termination_reason": Termination.from_legacy(reason, kind).value}
        return data

    @property
    def termination(self) -> Termination:
        return Termination(self.termination_reason)

    @property
    def scored(self) -> bool:
        return self.status == "scored" and self.reward is not None

    @property
    def passed(self) -> bool:
        return self.scored and (self.reward or 0.0) >= PASS_THRESHOLD


class RunInfo(BaseModel):
    """What was run and how."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    """Name of the run (also on its sandboxes' labels)."""
    model: str
    """The model client's name."""
    tasks_file: str | None = None
    """Where the tasks came from."""
    attempts: int = 1
    """Attempts per task."""
    max_steps: int = 0
    """Model turns per episode."""
    concurrency: int = 1
    """Episodes run at once."""
    started_at: str = ""
    """UTC ISO time the run started."""
    finished_at: str = ""
    """UTC ISO time the run finished (empty while it runs)."""
    wall_s: float = 0.0
    """Wall clock of the run so far."""
    sampling: dict[str, Any] = Field(default_factory=dict)
    """Sampling keywords passed to every model call."""
    sandbox_backend: str | None = None
    """The sandbox backend the episodes ran in (docker, bwrap, ray); None in results written before it was recorded."""


class RunResults(BaseModel):
    """Everything one run produced; :func:`summarize` derives the headline numbers."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int = RESULTS_SCHEMA_VERSION
    """Layout version of ``results.json``."""
    run: RunInfo
    """What was run and how."""
    trials: list[TrialResult] = Field(default_factory=list)
    """One record per finished trial."""
    summary: dict[str, Any] = Field(default_factory=dict)
    """Headline numbers (:func:`terminal_agent.evaluation.report.summarize`), filled at the end of the run."""

    # --- views used by stats and reports ------------------------------------------------------
    def task_ids(self) -> list[str]:
        return sorted({trial.task_id for trial in self.trials})

    def rewards_by_task(self) -> dict[str, list[float]]:
        """Task -> rewards of its scored trials (error trials left out)."""
        result: dict[str, list[float]] = defaultdict(list)
        for trial in self.trials:
            if trial.scored and trial.reward is not None:  # a scored trial has a reward: the second test is for the type
                result[trial.task_id].append(float(trial.reward))
        return dict(result)

    def passes_by_task(self) -> dict[str, list[float]]:
        """Task -> 1.0/0.0 per scored trial."""
        result: dict[str, list[float]] = defaultdict(list)
        for trial in self.trials:
            if trial.scored:
                result[trial.task_id].append(1.0 if trial.passed else 0.0)
        return dict(result)

    def pass_counts(self) -> dict[str, tuple[int, int]]:
        """Task -> (scored attempts, passes)."""
        return {task: (len(values), int(sum(values))) for task, values in self.passes_by_task().items()}

    def errors_by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for trial in self.trials:
            if not trial.scored:
                counts[trial.error.kind if trial.error else "unknown"] += 1
        return dict(sorted(counts.items()))

    # --- files --------------------------------------------------------------------------------
    def write(self, path: Path) -> None:
        """Write atomically (temp file + rename) so a reader never sees half a file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(_json_safe(self.model_dump(mode="json")), indent=2, allow_nan=False) + "\n")
        tmp.replace(path)

    @classmethod
    def read(cls, path: Path | str) -> "RunResults":
        path = Path(path)
        if path.is_dir():
            path = path / "results.json"
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"results file {path} does not exist") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"results file {path} is not JSON: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"results file {path} cannot be read: {exc.strerror or exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"results file {path} holds a JSON {type(data).__name__}, not a results object")
        if data.get("schema_version") != RESULTS_SCHEMA_VERSION:
            raise ConfigError(
                f"results file {path} has schema_version {data.get('schema_version')!r}, expected {RESULTS_SCHEMA_VERSION}"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in exc.errors()[:5]
            )
            raise ConfigError(f"results file {path} is malformed: {problems}") from None


def _json_safe(value: Any) -> Any:
    """NaN/inf become ``None`` (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value
