"""One trial folder of a Harbor 0.25 job: ``config.json``, ``result.json``, ``agent/trajectory.json``, ``verifier/``.

``result.json`` is Harbor's ``TrialResult``. A scored trial has ``verifier_result.rewards`` (``reward``, and
``tests`` / ``judge`` when they are parts of it). An unscored one (infrastructure) has no verifier result and an
``exception_info`` whose ``exception_type`` is a name Harbor's error policy files under the same cause (a broken
sandbox as ``RuntimeRequestError``: ``sandbox_failed``, a failed provider as ``ApiError``, a crashed grader or
judge as ``VerifierOutputParseError``), so Harbor and its viewer never read it as a reward of 0; our own kind,
termination and message are in ``exception_message`` and in ``agent_result.metadata``
(``infrastructure_failure: true``).

``verifier/`` holds ``reward.txt`` and ``reward.json`` (scored trials only), ``ctrf.json`` (every declared test
with its weight, guard flag and failure message), ``test-stdout.txt`` (the grader's output tail) and, when a
judge ran, ``judge.json`` (its score, reasoning, backend and weight).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from terminal_agent.harbor_jobs.atif import AGENT_NAME, agent_version, atif_trajectory, judge_fields
from terminal_agent.harbor_jobs.records import HarborTrialRecord
from terminal_agent.rollout.transcripts import to_jsonable

HARBOR_EXCEPTION_TYPES = {
    "sandbox": "RuntimeRequestError",
    "infrastructure": "RuntimeRequestError",
    "image": "SandboxBuildFailedError",
    "provider": "ApiError",
    "grading": "VerifierOutputParseError",
    "judge": "VerifierOutputParseError",
}
"""Our error kind -> the exception name Harbor's error policy classifies the same way (cause, no valid reward).
Kinds without a counterpart (``timeout`` of the runner's wall clock, ``internal``) are written as
``TerminalAgent<Kind>Error``, which Harbor files as ``unclassified``."""


def harbor_exception_type(kind: str | None) -> str:
    kind = kind or "internal"
    return HARBOR_EXCEPTION_TYPES.get(kind, f"TerminalAgent{kind.title().replace('_', '')}Error")


def stable_uuid(*parts: str) -> str:
    """A UUID fixed by its parts, so a trial written live and converted later has the same id."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "terminal-agent:" + "/".join(parts)))


def write_json(path: Path, value: object) -> None:
    """Write atomically (temp file + rename): the viewer may read while a run writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # to_jsonable: NaN and infinities (a judge's latency, a broken score) become null, which JSON can hold
    tmp.write_text(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    tmp.replace(path)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat()


def trial_config(record: HarborTrialRecord, job_dir: Path, job_id: str, agent_kwargs: dict[str, Any],
                 environment: dict[str, Any]) -> dict[str, Any]:
    """Harbor's ``TrialConfig`` of the trial."""
    return {
        "task": {"path": record.task_id, "source": record.source},
        "trial_name": record.trial_name,
        "trials_dir": str(job_dir),
        "agent": {"name": AGENT_NAME, "model_name": record.model_name or None, "kwargs": agent_kwargs},
        "environment": environment,
        "job_id": job_id,
    }


def trial_result(record: HarborTrialRecord, job_dir: Path, job_id: str, config: dict[str, Any]) -> dict[str, Any]:
    """Harbor's ``TrialResult`` of the trial, as JSON."""
    outcome = record.outcome
    trial = record.trial
    metadata: dict[str, Any] = {
        "termination": outcome.termination.value,
        "scored": outcome.scored,
        "infrastructure_failure": record.infrastructure_failure,
        "reward": outcome.reward if outcome.scored else None,
        "test_score": outcome.test_score,
        "tampered": outcome.tampered,
        "turns": outcome.turns or (trial.turns if trial else len(record.turns)),
        "attempt": record.attempt,
    }
    if trial is not None:
        metadata.update(env_time_s=trial.env_time_s, model_time_s=trial.model_time_s, model_wait_s=trial.model_wait_s,
                        wall_s=trial.wall_s, transcript=trial.transcript)
    if outcome.error_kind or outcome.error:
        metadata["error"] = {"kind": outcome.error_kind, "message": outcome.error}
    judge = judge_fields(record)
    if judge:
        metadata["judge"] = judge
    metadata.update(record.metadata)
    prompt_tokens = trial.prompt_tokens if trial else sum(c.prompt_tokens or 0 for c in record.calls)
    completion_tokens = trial.completion_tokens if trial else sum(c.completion_tokens or 0 for c in record.calls)
    grading_s = float((outcome.details or {}).get("grading_s") or 0.0)
    verifier_started = record.finished_at - dt.timedelta(seconds=grading_s)
    result: dict[str, Any] = {
        "id": stable_uuid(job_id, record.trial_name),
        "task_name": record.task_id,
        "trial_name": record.trial_name,
        "trial_uri": (job_dir / record.trial_name).resolve().as_uri(),
        "task_id": {"path": record.task_id},
        "source": record.source,
        "task_checksum": hashlib.sha256(record.instruction.encode()).hexdigest()[:16],
        "config": config,
        "agent_info": {"name": AGENT_NAME, "version": agent_version(),
                       "model_info": _model_info(record.model_name) if record.model_name else None},
        "agent_result": {"n_input_tokens": prompt_tokens, "n_output_tokens": completion_tokens, "metadata": metadata},
        "verifier_result": {"rewards": rewards_of(record)} if outcome.scored else None,
        "exception_info": None,
        "started_at": _iso(record.started_at),
        "finished_at": _iso(record.finished_at),
        "agent_execution": {"started_at": _iso(record.started_at), "finished_at": _iso(verifier_started)},
        "verifier": {"started_at": _iso(verifier_started), "finished_at": _iso(record.finished_at)} if grading_s else None,
    }
    if not outcome.scored:
        result["exception_info"] = {
            "exception_type": harbor_exception_type(outcome.error_kind),
            "exception_message": f"[{outcome.error_kind or 'unknown'} / {outcome.termination.value}] {outcome.error or ''}".rstrip(),
            "exception_traceback": "",
            "occurred_at": _iso(record.finished_at),
        }
    return result


def _model_info(model_name: str) -> dict[str, Any]:
    provider, _, name = model_name.partition("/")
    return {"name": name, "provider": provider} if name and " " not in provider else {"name": model_name, "provider": None}


def rewards_of(record: HarborTrialRecord) -> dict[str, float]:
    """``reward`` first (what the viewer shows), then its parts when they differ from it."""
    outcome = record.outcome
    rewards = {"reward": float(outcome.reward or 0.0)}
    if outcome.test_score is not None:
        rewards["tests"] = float(outcome.test_score)
    judge = judge_fields(record)
    if isinstance(judge.get("score"), (int, float)):
        rewards["judge"] = float(judge["score"])
    return rewards


def ctrf_report(record: HarborTrialRecord) -> dict[str, Any]:
    """The declared tests as a CTRF report (the format Harbor's verifiers write); weights in ``extra``."""
    grade = record.outcome.grade
    tests = []
    for test in record.outcome.tests:
        entry: dict[str, Any] = {
            "name": test.name,
            "status": "passed" if test.passed else "failed",
            "duration": 0,
            "extra": {"weight": test.weight, "guard": test.guard, "reported": test.reported},
        }
        if test.message:
            entry["message"] = test.message
        tests.append(entry)
    passed = sum(1 for t in tests if t["status"] == "passed")
    return {
        "results": {
            "tool": {"name": "terminal-agent"},
            "summary": {"tests": len(tests), "passed": passed, "failed": len(tests) - passed, "pending": 0, "skipped": 0,
                        "other": 0, "start": 0, "stop": 0},
            "tests": tests,
            "extra": {"score": grade.score if grade else None,
                      "failed_guards": list(grade.failed_guards) if grade else [],
                      "tamper_signals": list(grade.tamper_signals) if grade else []},
        }
    }


def test_output(record: HarborTrialRecord) -> str:
    """``test-stdout.txt``: the weighted tests, then the grader's output tail (or why nothing was graded)."""
    outcome = record.outcome
    grade = outcome.grade
    lines = []
    for test in outcome.tests:
        mark = "PASSED" if test.passed else ("NOT REPORTED" if not test.reported else "FAILED")
        guard = " guard" if test.guard else ""
        lines.append(f"{mark:12} {test.name} (weight {test.weight}{guard})")
        if test.message and not test.passed:
            lines.append("    " + test.message.replace("\n", "\n    "))
    if grade is not None and grade.score is not None:
        lines.append(f"score {grade.score}")
    grade_error = grade.error if grade is not None else None
    if grade_error or (not outcome.scored and outcome.error):
        lines.append(f"error: {grade_error or outcome.error}")
    if grade is not None and grade.log_tail:
        lines += ["", "--- grader output (tail) ---", grade.log_tail]
    return "\n".join(lines) + "\n" if lines else ""


def write_trial(record: HarborTrialRecord, job_dir: Path, job_id: str, *, agent_kwargs: dict[str, Any],
                environment: dict[str, Any]) -> dict[str, Any]:
    """Write the trial's folder under ``job_dir``; returns its ``result.json`` object."""
    trial_dir = job_dir / record.trial_name
    config = trial_config(record, job_dir, job_id, agent_kwargs, environment)
    result = trial_result(record, job_dir, job_id, config)
    write_json(trial_dir / "agent" / "trajectory.json", atif_trajectory(record))
    verifier = trial_dir / "verifier"
    verifier.mkdir(parents=True, exist_ok=True)
    if record.outcome.scored:
        (verifier / "reward.txt").write_text(f"{float(record.outcome.reward or 0.0):g}\n")
        write_json(verifier / "reward.json", rewards_of(record))
    if record.outcome.grade is not None:
        write_json(verifier / "ctrf.json", ctrf_report(record))
    output = test_output(record)
    if output:
        (verifier / "test-stdout.txt").write_text(output)
    judge = judge_fields(record)
    if judge:
        write_json(verifier / "judge.json", judge)
    write_json(trial_dir / "config.json", config)
    write_json(trial_dir / "result.json", result)  # last: a trial with result.json is complete
    return result


__all__ = ["HARBOR_EXCEPTION_TYPES", "ctrf_report", "harbor_exception_type", "rewards_of", "stable_uuid", "trial_result",
           "write_json", "write_trial"]
