"""Workflow files (JSON):

    {
      "name": "nightly",
      "defaults": {"retries": 0, "timeout": 600, "backoff": {"base": 1.0, "factor": 2.0, "max": 60.0}},
      "jobs": {
        "extract": {"command": "python3 extract.py"},
        "load": {"command": "./load.sh", "deps": ["extract"], "retries": 2, "env": {"MODE": "full"}}
      }
    }

Job names are made of letters, digits, ``_``, ``-`` and ``.``. A job's settings override the defaults.
"""

import json
import os
import re
from dataclasses import dataclass, field

from .backoff import BackoffPolicy
from .errors import SpecError

JOB_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
JOB_FIELDS = {"command", "deps", "retries", "timeout", "backoff", "env"}


@dataclass(frozen=True)
class JobSpec:
    name: str
    command: str
    deps: tuple = ()
    retries: int = 0
    timeout: float = 600.0
    backoff: BackoffPolicy = field(default_factory=BackoffPolicy)
    env: tuple = ()
    """(name, value) pairs added to the job's environment."""


@dataclass(frozen=True)
class WorkflowSpec:
    name: str
    jobs: dict
    """{name: JobSpec}, in file order."""
    workdir: str
    source: str
    """The canonical JSON text of the workflow (stored with a run, compared on resume)."""


def _number(path, where, value, minimum=0.0):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise SpecError(path, f"{where} must be a number >= {minimum}, not {value!r}")
    return float(value)


def _count(path, where, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpecError(path, f"{where} must be a whole number >= 0, not {value!r}")
    return value


def _backoff(path, where, data, default):
    if data is None:
        return default
    if not isinstance(data, dict) or set(data) - {"base", "factor", "max"}:
        raise SpecError(path, f"{where} must be an object with base, factor and max")
    return BackoffPolicy(
        base=_number(path, f"{where}.base", data.get("base", default.base)),
        factor=_number(path, f"{where}.factor", data.get("factor", default.factor), 1.0),
        max_delay=_number(path, f"{where}.max", data.get("max", default.max_delay)),
    )


def parse_workflow(data, path="<workflow>", workdir="."):
    if not isinstance(data, dict):
        raise SpecError(path, "the workflow must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise SpecError(path, "the workflow needs a non-empty 'name'")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise SpecError(path, "'defaults' must be an object")
    default_retries = _count(path, "defaults.retries", defaults.get("retries", 0))
    default_timeout = _number(path, "defaults.timeout", defaults.get("timeout", 600.0), 0.001)
    default_backoff = _backoff(path, "defaults.backoff", defaults.get("backoff"), BackoffPolicy())
    raw_jobs = data.get("jobs")
    if not isinstance(raw_jobs, dict) or not raw_jobs:
        raise SpecError(path, "'jobs' must be a non-empty object")
    jobs = {}
    for job_name, job in raw_jobs.items():
        where = f"jobs.{job_name}"
        if not JOB_NAME.match(job_name):
            raise SpecError(path, f"bad job name {job_name!r}")
        if not isinstance(job, dict):
            raise SpecError(path, f"{where} must be an object")
        unknown = set(job) - JOB_FIELDS
        if unknown:
            raise SpecError(path, f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        command = job.get("command")
        if not isinstance(command, str) or not command.strip():
            raise SpecError(path, f"{where}.command must be a non-empty string")
        deps = job.get("deps", [])
        if not isinstance(deps, list) or not all(isinstance(dep, str) for dep in deps):
            raise SpecError(path, f"{where}.deps must be a list of job names")
        if len(set(deps)) != len(deps):
            raise SpecError(path, f"{where}.deps names a job twice")
        env = job.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise SpecError(path, f"{where}.env must map names to strings")
        jobs[job_name] = JobSpec(
            name=job_name,
            command=command,
            deps=tuple(deps),
            retries=_count(path, f"{where}.retries", job.get("retries", default_retries)),
            timeout=_number(path, f"{where}.timeout", job.get("timeout", default_timeout), 0.001),
            backoff=_backoff(path, f"{where}.backoff", job.get("backoff"), default_backoff),
            env=tuple(sorted(env.items())),
        )
    for job in jobs.values():
        for dep in job.deps:
            if dep not in jobs:
                raise SpecError(path, f"jobs.{job.name} depends on unknown job {dep!r}")
    source = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return WorkflowSpec(name, jobs, workdir, source)


def load_workflow(path):
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise SpecError(path, f"cannot read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise SpecError(path, f"not valid JSON: {error}") from error
    return parse_workflow(data, path, os.path.dirname(os.path.abspath(path)))
