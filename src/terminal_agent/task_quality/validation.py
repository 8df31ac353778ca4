"""Oracle validation: every task must fail untouched and pass with its reference solution.

For each task two episodes run through the real environment and grader:

* **no-op** - the agent finishes at once; the score must be below 1 (otherwise the tests pass
  on the untouched environment and the task measures nothing);
* **oracle** - as Harbor's oracle agent does, the reference solution and the files beside it
  (``solution/`` of a Harbor task) are written under ``/solution`` (base64, so no quoting or
  byte can break them) and ``/solution/solve.sh`` runs with bash and
  ``DEBIAN_FRONTEND=noninteractive``, then the agent finishes; the score must be exactly 1.0.

Both use the scripted model client, so no private hook into the environment is needed. The
result records each task's content hashes (:meth:`Task.content_hashes`) in a JSON manifest.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import posixpath
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from terminal_agent.interfaces import ModelClient
from terminal_agent.evaluation.results import PASS_THRESHOLD, TrialResult
from terminal_agent.rollout.runner import ProgressCallback, RolloutConfig, RolloutRunner, TrialSpec
from terminal_agent.tasks.model import Task

logger = logging.getLogger(__name__)

#: Where the oracle puts the solution's files (Harbor's ``EnvironmentPaths.solution_dir``).
ORACLE_SOLUTION_DIR = "/solution"
ORACLE_SCRIPT_PATH = f"{ORACLE_SOLUTION_DIR}/solve.sh"
FINISH_REPLY = "<finish>\nmessage: done\n</finish>"
MANIFEST_VERSION = 1


def oracle_replies(task: Task, timeout_s: float | None = None) -> list[str]:
    """Scripted replies that put ``task.solution`` and ``task.solution_files`` under ``/solution``, run
    ``/solution/solve.sh`` and finish (a solve.sh may read its own files there, as under Harbor)."""
    if not task.solution:
        raise ValueError(f"task {task.task_id} has no reference solution")
    files: dict[str, str | bytes] = {**task.solution_files, "solve.sh": task.solution}
    folders = sorted({posixpath.dirname(f"{ORACLE_SOLUTION_DIR}/{path}") for path in files})
    writes = ["mkdir -p -- " + " ".join(shlex.quote(folder) for folder in folders)]
    for path in sorted(files):
        content = files[path]
        data = content.encode() if isinstance(content, str) else content
        encoded = base64.b64encode(data).decode()
        writes.append(f"printf %s {encoded} | base64 -d > {shlex.quote(f'{ORACLE_SOLUTION_DIR}/{path}')}")
    timeout = timeout_s or min(600.0, task.limits.agent_timeout_s)
    command = " && ".join(writes) + f" && DEBIAN_FRONTEND=noninteractive bash {ORACLE_SCRIPT_PATH}"
    run = f"<bash>\ncmd: {command}\ntimeout_secs: {timeout:g}\n</bash>"
    return [run, FINISH_REPLY]


def noop_replies() -> list[str]:
    return [FINISH_REPLY]


class TaskValidation(BaseModel):
    """Outcome of validating one task."""

    task_id: str
    ok: bool
    noop_score: float | None = None
    oracle_score: float | None = None
    problems: list[str] = Field(default_factory=list)
    """Why the task is not valid (empty when ``ok``)."""
    infrastructure_errors: list[str] = Field(default_factory=list)
    """Errors that kept an episode from being scored (the task's validity is then unknown)."""
    hashes: dict[str, str] = Field(default_factory=dict)
    failing_tests: list[str] = Field(default_factory=list)
    """Tests that failed in the oracle episode."""


def _scripted(replies: list[str], name: str) -> ModelClient:
    from terminal_agent.models.scripted import ScriptedModelClient

    return ScriptedModelClient(replies, name=name)


def _judge(task: Task, noop: TrialResult | None, oracle: TrialResult | None) -> TaskValidation:
    problems: list[str] = []
    infra: list[str] = []
    failing: list[str] = []
    if not task.solution:
        problems.append("no reference solution")
    for label, trial in (("no-op", noop), ("oracle", oracle)):
        if trial is not None and not trial.scored:
            kind = trial.error.kind if trial.error else "unknown"
            infra.append(f"{label} episode not scored ({kind}): {trial.error.message if trial.error else ''}".strip())
    if noop is not None and noop.scored and (noop.reward or 0.0) >= PASS_THRESHOLD:
        problems.append("the tests pass without any work (no-op scores 1.0)")
    if oracle is not None and oracle.scored:
        if (oracle.reward or 0.0) < PASS_THRESHOLD:
            failing = [t.name for t in oracle.tests if not t.passed]
            problems.append(f"the reference solution scores {oracle.reward:.3f} < 1.0 (failing: {', '.join(failing) or '?'})")
    return TaskValidation(
        task_id=task.task_id,
        ok=not problems and not infra,
        noop_score=noop.reward if noop is not None and noop.scored else None,
        oracle_score=oracle.reward if oracle is not None and oracle.scored else None,
        problems=problems,
        infrastructure_errors=infra,
        hashes=task.content_hashes(),
        failing_tests=failing,
    )


def validate_tasks(
    tasks: Sequence[Task],
    *,
    concurrency: int = 2,
    output_dir: Path | None = None,
    on_progress: ProgressCallback | None = None,
    runner_options: dict[str, Any] | None = None,
) -> list[TaskValidation]:
    """Run the no-op and oracle episodes of every task; return one :class:`TaskValidation` each.

    ``output_dir`` keeps the episodes' results and transcripts (``noop/`` and ``oracle/``).
    """
    by_id = {task.task_id: task for task in tasks}
    total = len(tasks) + sum(1 for t in tasks if t.solution)
    finished = 0

    def progress(_: int, __: int, trial: TrialResult) -> None:
        nonlocal finished
        finished += 1
        if on_progress is not None:
            on_progress(finished, total, trial)

    def run(kind: str, chosen: list[Task], replies: Callable[[Task], list[str]], max_steps: int) -> dict[str, TrialResult]:
        if not chosen:
            return {}
        config = RolloutConfig(
            concurrency=concurrency,
            max_steps=max_steps,
            output_dir=output_dir / kind if output_dir else None,
            sweep_leaked=kind == "noop",
        )
        runner = RolloutRunner(
            _scripted([], f"{kind}-oracle"),
            config,
            on_progress=progress,
            model_for_trial=lambda spec: _scripted(replies(spec.task), f"{kind}-oracle"),
            **(runner_options or {}),
        )
        results = runner.run_trials([TrialSpec(task, 0) for task in chosen])
        return {trial.task_id: trial for trial in results.trials}

    noop = run("noop", list(tasks), lambda _: noop_replies(), max_steps=1)
    oracle = run("oracle", [t for t in tasks if t.solution], oracle_replies, max_steps=2)
    return [_judge(by_id[task_id], noop.get(task_id), oracle.get(task_id)) for task_id in by_id]


def validation_manifest(validations: Sequence[TaskValidation], tasks_file: str | None = None) -> dict[str, Any]:
    """The JSON manifest: per task whether it is valid, both scores and its content hashes."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "kind": "validation",
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "tasks_file": tasks_file,
        "n_tasks": len(validations),
        "n_ok": sum(1 for v in validations if v.ok),
        "tasks": {v.task_id: v.model_dump(exclude={"task_id"}) for v in validations},
    }


def write_manifest(manifest: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    tmp.replace(path)
    return path
