"""The cheap-trick audit of a task set: which tasks pay an agent that does not solve them.

For every task, every registered trick (:mod:`terminal_agent.task_quality.cheap_tricks`) that applies builds a
script; each runs as a scripted episode in the task's real sandbox and is graded by its real grader (the same
episodes as validation: :func:`~terminal_agent.task_quality.validation.run_scripted_episodes`). The task's own
negative solutions (``Task.negative_solutions``) run beside them, each with its own bound. A task is **beaten**
by a trick that scores above the trick's allowed score (``threshold`` for the tricks that do no work). An
episode that infrastructure kept from being scored is recorded as an infrastructure error, never as a score.

Works on any task set the loaders read (CSV, parquet, terminal-bench or Harbor folders), whatever its grading
mode; a trick that cannot be built for a task is recorded as not applicable.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from terminal_agent.evaluation.results import TrialResult
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.task_quality.cheap_tricks import CHEAP_TRICKS, NO_WORK_ALLOWED, REFERENCE_SCRIPT, CheapTrick
from terminal_agent.task_quality.no_work_rule import SCORE_TOLERANCE
from terminal_agent.task_quality.validation import (
    ScriptedEpisode,
    negative_replies,
    run_scripted_episodes,
    solution_script_replies,
)
from terminal_agent.tasks.model import Task

logger = logging.getLogger(__name__)

AUDIT_VERSION = 1
NEGATIVE_PREFIX = "negative:"
"""Label of a task's own negative solution in the report (``negative:<name>``)."""


class TrickOutcome(str, Enum):
    """What one trick did on one task."""

    BEATEN = "beaten"
    """It scored above what it may earn: the task pays for it."""
    HELD = "held"
    """It scored what it may earn or less."""
    INFRASTRUCTURE_ERROR = "infrastructure_error"
    """The episode was not scored (build, sandbox or grading failure): nothing is known."""
    NOT_APPLICABLE = "not_applicable"
    """The trick has nothing to try on this task (no output path, no program under repair, ...)."""


@dataclass
class TrickResult:
    """One trick on one task."""

    trick: str
    outcome: TrickOutcome
    allowed: float
    score: float | None = None
    passed_tests: list[str] = field(default_factory=list)
    """Tests the trick passed (what the task paid for)."""
    error: str | None = None


@dataclass
class TaskAudit:
    """Every trick's result on one task."""

    task_id: str
    results: list[TrickResult]

    @property
    def beaten_by(self) -> list[TrickResult]:
        return [result for result in self.results if result.outcome is TrickOutcome.BEATEN]

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "beaten": bool(self.beaten_by),
                "results": [{**asdict(result), "outcome": result.outcome.value} for result in self.results]}


def selected_tricks(names: Sequence[str] | None = None) -> list[CheapTrick]:
    """The tricks named (all registered ones when ``names`` is empty); an unknown name is a ConfigError."""
    return [CHEAP_TRICKS.get(name) for name in (names or CHEAP_TRICKS.names())]


def _allowed(trick: CheapTrick, threshold: float) -> float:
    return threshold if trick.allowed == NO_WORK_ALLOWED else max(trick.allowed, threshold)


def _result(label: str, allowed: float, trial: TrialResult | None) -> TrickResult:
    if trial is None or not trial.scored:
        message = trial.error.message if trial is not None and trial.error else "no result"
        return TrickResult(label, TrickOutcome.INFRASTRUCTURE_ERROR, allowed, error=message)
    score = trial.reward or 0.0
    outcome = TrickOutcome.BEATEN if score > allowed + SCORE_TOLERANCE else TrickOutcome.HELD
    return TrickResult(label, outcome, allowed, score, [test.name for test in trial.tests if test.passed])


def audit_tasks(
    tasks: Sequence[Task],
    *,
    tricks: Sequence[str] | None = None,
    threshold: float = NO_WORK_ALLOWED,
    concurrency: int = 2,
    output_dir: Path | None = None,
    on_progress: Callable[[int, int, TrialResult], None] | None = None,
    sandbox: SandboxConfig | None = None,
    runner_options: dict[str, Any] | None = None,
) -> list[TaskAudit]:
    """Run every applicable trick and negative solution on every task; one :class:`TaskAudit` per task, in order.

    ``threshold``: the most a trick that does no work may earn (default: the no-op's bound, 0.05); a trick that
    does part of the work in the wrong form (the stand-in rewrite) may earn its own ``allowed`` score.
    """
    chosen = selected_tricks(tricks)
    episodes: list[ScriptedEpisode] = []
    labels: dict[tuple[str, int], tuple[str, float]] = {}
    planned: dict[str, list[TrickResult]] = {task.task_id: [] for task in tasks}
    for task in tasks:
        attempt = 0
        for trick in chosen:
            try:
                script = trick.build(task)
            except ValueError as exc:  # a task the trick cannot read (odd files): not applicable, the others go on
                logger.warning("trick %s cannot be built for %s: %s", trick.name, task.task_id, exc)
                script = None
            if script is None:
                planned[task.task_id].append(TrickResult(trick.name, TrickOutcome.NOT_APPLICABLE,
                                                         _allowed(trick, threshold)))
                continue
            extra = {REFERENCE_SCRIPT: task.solution or ""} if trick.needs_reference else None
            episodes.append((task, attempt, solution_script_replies(task, script, extra_files=extra)))
            labels[(task.task_id, attempt)] = (trick.name, _allowed(trick, threshold))
            attempt += 1
        for negative in task.negative_solutions:
            episodes.append((task, attempt, negative_replies(task, negative)))
            labels[(task.task_id, attempt)] = (NEGATIVE_PREFIX + negative.name, negative.max_score)
            attempt += 1
    finished = 0

    def progress(trial: TrialResult) -> None:
        nonlocal finished
        finished += 1
        if on_progress is not None:
            on_progress(finished, len(episodes), trial)

    trials = run_scripted_episodes("audit", episodes, max_steps=2, concurrency=concurrency, output_dir=output_dir,
                                   on_trial=progress, runner_options=runner_options, sandbox=sandbox,
                                   sweep_leaked=True)
    for key, (label, allowed) in labels.items():
        planned[key[0]].append(_result(label, allowed, trials.get(key)))
    return [TaskAudit(task.task_id, planned[task.task_id]) for task in tasks]


def audit_report(audits: Sequence[TaskAudit], *, source: str | None, threshold: float,
                 tricks: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON report: the settings, per trick how many tasks it beat, and every task's results."""
    per_trick: dict[str, dict[str, int]] = {}
    for audit in audits:
        for result in audit.results:
            counts = per_trick.setdefault(result.trick, {outcome.value: 0 for outcome in TrickOutcome})
            counts[result.outcome.value] += 1
    beaten = [audit for audit in audits if audit.beaten_by]
    return {
        "audit_version": AUDIT_VERSION,
        "kind": "cheap_trick_audit",
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source,
        "threshold": threshold,
        "tricks": {trick.name: {"summary": trick.summary, "allowed": _allowed(trick, threshold)}
                   for trick in selected_tricks(tricks)},
        "n_tasks": len(audits),
        "n_beaten": len(beaten),
        "beaten": {audit.task_id: [f"{r.trick} {r.score:.3f}" for r in audit.beaten_by] for audit in beaten},
        "per_trick": dict(sorted(per_trick.items())),
        "tasks": [audit.to_dict() for audit in audits],
    }
