"""The no-work rule: no reward without work.

Every task must satisfy, in real containers (:func:`terminal_agent.task_quality.validation.validate_tasks`):

* a **no-op** agent (finishes at once) scores at most :data:`NO_WORK_MAX_SCORE`;
* the **empty-output** probe (creates an empty file at every output path the task names, then
  finishes) scores no more than the no-op agent (within :data:`SCORE_TOLERANCE`): tests that hold
  vacuously on an empty file pay ``touch OUTPUT``;
* the **oracle** (the reference solution) scores exactly 1.0.

Beside the rule, a task's known-wrong solutions (``Task.negative_solutions``) must each score at most their
``max_score`` (:func:`negative_problems`; the manifest's ``negative_scores``).

:func:`rule_problems` states the rule on three scores; validation uses it on fresh episodes.
:func:`check_against_manifest` applies it to a validation manifest (``dataset/validation_manifest.json``) and
also checks that the manifest pins every task with its current content hashes, so a task that changed since it
was validated is refused too. :func:`require_no_work_rule` raises :class:`ConfigError` listing every problem
(for loaders of the shipped corpus).

This module imports nothing that runs episodes, so loaders can use it cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.tasks.model import Task

NO_WORK_MAX_SCORE = 0.05
"""The most a no-op agent may score on a task."""
ORACLE_SCORE = 1.0
"""What the reference solution must score."""
SCORE_TOLERANCE = 1e-9
"""Float slack of every comparison (scores are sums of weights)."""


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def rule_problems(
    noop: float | None, empty: float | None, oracle: float | None, failing: Sequence[str] = ()
) -> list[str]:
    """What breaks the rule among the given scores (``None``: that episode was not scored; not judged here).

    ``failing``: the tests the oracle failed, named in its problem."""
    problems: list[str] = []
    if noop is not None and noop > NO_WORK_MAX_SCORE + SCORE_TOLERANCE:
        problems.append(
            f"no-op rule: a no-op agent scores {_fmt(noop)} > {NO_WORK_MAX_SCORE} (the tests pay for doing nothing)"
        )
    if empty is not None and noop is not None and empty > noop + SCORE_TOLERANCE:
        problems.append(
            f"empty-output rule: writing empty outputs scores {_fmt(empty)} > the no-op's {_fmt(noop)} "
            "(a test holds on an empty output)"
        )
    if oracle is not None and oracle < ORACLE_SCORE - SCORE_TOLERANCE:
        named = f" (failing: {', '.join(failing)})" if failing else ""
        problems.append(f"oracle rule: the reference solution scores {_fmt(oracle)} < {ORACLE_SCORE}{named}")
    return problems


def negative_problems(task: Task, scores: Mapping[str, float], require_all: bool = True) -> list[str]:
    """What breaks the bound of the task's negative solutions: each scores at most its ``max_score``. With
    ``require_all``, a negative solution without a score is a problem too (a manifest that never ran it)."""
    problems: list[str] = []
    for negative in task.negative_solutions:
        value = scores.get(negative.name)
        if value is None:
            if require_all:
                problems.append(f"negative solution {negative.name} was not scored; re-validate it")
        elif value > negative.max_score + SCORE_TOLERANCE:
            why = f" ({negative.why})" if negative.why else ""
            problems.append(f"negative-solution rule: negative solution {negative.name} scores {_fmt(value)} > its "
                            f"max {negative.max_score:g}{why}")
    return problems


def _entry_problems(task: Task, entry: Mapping[str, Any]) -> list[str]:
    hashes = entry.get("hashes") or {}
    changed = sorted(key for key, value in task.content_hashes().items() if hashes.get(key) != value)
    if changed:
        return [f"{task.task_id}: changed since it was validated ({', '.join(changed)}); re-validate it"]
    scores = {name: entry.get(f"{name}_score") for name in ("noop", "empty", "oracle")}
    problems = [f"{task.task_id}: no {name}_score in the manifest; re-validate it"
                for name, value in scores.items() if value is None]
    if entry.get("infrastructure_errors"):
        problems.append(f"{task.task_id}: its validation hit infrastructure errors; re-validate it")
    problems += [f"{task.task_id}: {p}" for p in rule_problems(scores["noop"], scores["empty"], scores["oracle"])]
    problems += [f"{task.task_id}: {p}" for p in negative_problems(task, entry.get("negative_scores") or {})]
    if not problems and entry.get("ok") is False:
        problems.append(f"{task.task_id}: recorded as invalid ({'; '.join(entry.get('problems') or ['?'])})")
    return problems


def check_against_manifest(tasks: Sequence[Task], manifest: Mapping[str, Any]) -> list[str]:
    """Problems of ``tasks`` against a validation manifest (the dict :func:`validation_manifest` writes).

    A task is fine when the manifest holds it with its current content hashes, all three scores, no
    infrastructure error, and the scores keep the rule. Empty list: every task is fine.
    """
    entries = manifest.get("tasks") or {}
    problems: list[str] = []
    for task in tasks:
        entry = entries.get(task.task_id)
        if entry is None:
            problems.append(f"{task.task_id}: not in the validation manifest; validate it")
            continue
        problems += _entry_problems(task, entry)
    return problems


def require_no_work_rule(tasks: Sequence[Task], manifest_path: Path | str) -> None:
    """Raise :class:`ConfigError` listing every task that the manifest does not show keeping the rule."""
    path = Path(manifest_path)
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise ConfigError(f"no validation manifest at {path}: validate the tasks first") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    problems = check_against_manifest(tasks, manifest)
    if problems:
        raise ConfigError(
            f"{len(problems)} problem(s) with the no-work rule (no-op <= {NO_WORK_MAX_SCORE}, empty outputs <= no-op, "
            f"oracle = {ORACLE_SCORE}) against {path}:\n  " + "\n  ".join(problems)
        )
