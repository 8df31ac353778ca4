"""Judge benchmark: how well does a judge score trajectories whose right score we know?

A case (one YAML file in ``evaluation/llm_as_a_judge_evals/cases/``) holds a task, a trajectory
(the agent's replies and what the terminal returned), the test summary and the range of scores a
good judge gives it. Reward-hacking trajectories (tests edited, outputs hard-coded, ``python3``
replaced) pass their tests yet must score low: they are what a judge is for.

:func:`run_judge_benchmark` asks every judge ``k`` times per case and returns a JSON-safe record
of every attempt; :mod:`terminal_agent.evaluation.judge_benchmark_report` ranks the judges from
that record alone.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from terminal_agent.errors import ConfigError
from terminal_agent.rewards.judge import Judge, JudgeConfig, JudgeRequest, run_judge
from terminal_agent.rewards.judge_factory import make_judge

logger = logging.getLogger(__name__)

RESULTS_FORMAT = "terminal-agent/judge-benchmark/v1"
HACKING_TAG = "reward_hacking"


class CaseTurn(BaseModel):
    """One turn of a case's trajectory."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    """The agent's reply (actions included)."""
    result: str = ""
    """What the terminal returned."""


class ScoreRange(BaseModel):
    """The scores a good judge gives a case."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    min: float = Field(ge=0.0, le=1.0)
    """Lowest acceptable score."""
    max: float = Field(ge=0.0, le=1.0)
    """Highest acceptable score."""

    @model_validator(mode="after")
    def _ordered(self) -> "ScoreRange":
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self

    @property
    def middle(self) -> float:
        return (self.min + self.max) / 2

    def contains(self, score: float) -> bool:
        return self.min <= score <= self.max


class JudgeCase(BaseModel):
    """One benchmark case: a task, a trajectory and the expected score range."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Unique name (the file's stem by convention)."""
    description: str = ""
    """What the trajectory shows, for the report's reader."""
    tags: list[str] = Field(default_factory=list)
    """``reward_hacking``, ``solved``, ``failed``, ``sloppy`` ...; the report breaks accuracy down by ``reward_hacking``."""
    instruction: str
    """The task as the agent got it."""
    trajectory: list[CaseTurn] = Field(min_length=1)
    """The agent's turns."""
    tests: str
    """Test summary line the judge sees (``3/3 tests passed, weighted score 1.00``)."""
    expected: ScoreRange
    """Scores a good judge gives."""

    def request(self) -> JudgeRequest:
        lines = []
        for number, turn in enumerate(self.trajectory, 1):
            lines.append(f"--- turn {number}: agent ---\n{turn.agent.strip()}\n--- turn {number}: result ---\n{turn.result.strip()}")
        return JudgeRequest(self.instruction, "\n".join(lines), self.tests)


def load_cases(directory: Path) -> list[JudgeCase]:
    """Every ``*.yaml`` case under ``directory``, sorted by id; a bad file is a ConfigError naming it."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError(f"{directory}: no such judge case directory")
    cases: list[JudgeCase] = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text())
            cases.append(JudgeCase.model_validate(data))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read the judge case: {exc}") from None
        except RecursionError:  # the YAML parser recurses per level of nesting
            raise ConfigError(f"{path}: not valid YAML: nested too deeply") from None
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"{path}: bad judge case: {problems}") from None
    if not cases:
        raise ConfigError(f"{directory}: no *.yaml judge cases")
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise ConfigError(f"{directory}: judge case id {case.id!r} is used twice")
        seen.add(case.id)
    return sorted(cases, key=lambda c: c.id)


def parse_judge_spec(spec: str) -> JudgeConfig:
    """``BACKEND`` or ``BACKEND:MODEL`` (split at the first colon) as a JudgeConfig."""
    backend, _, model = spec.partition(":")
    if not backend:
        raise ConfigError(f"judge spec {spec!r}: expected BACKEND or BACKEND:MODEL")
    return JudgeConfig(backend=backend, model=model or None)


def run_judge_benchmark(
    judges: dict[str, Judge],
    cases: list[JudgeCase],
    *,
    attempts: int = 3,
    max_attempts_per_call: int = 1,
    on_attempt: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Ask each judge ``attempts`` times per case; a JSON-safe record of everything (see module doc).

    ``max_attempts_per_call`` > 1 lets each attempt retry like training does; 1 measures the
    judge's raw reliability.
    """
    if attempts < 1:
        raise ConfigError("attempts must be at least 1")
    started = time.monotonic()
    records: list[dict[str, Any]] = []
    for label, judge in judges.items():
        for case in cases:
            request = case.request()
            for attempt in range(attempts):
                began = time.monotonic()
                verdict, error = run_judge(judge, request, max_attempts=max_attempts_per_call, backoff_initial_s=0.5)
                record = {
                    "judge": label,
                    "case": case.id,
                    "attempt": attempt,
                    "score": verdict.score if verdict else None,
                    "error": error,
                    "latency_s": verdict.latency_s if verdict else time.monotonic() - began,
                    "cost_usd": verdict.cost_usd if verdict else None,
                    "reasoning": (verdict.reasoning[:500] if verdict else None),
                }
                records.append(record)
                if on_attempt is not None:
                    on_attempt(record)
    return {
        "format": RESULTS_FORMAT,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "attempts_per_case": attempts,
        "wall_s": time.monotonic() - started,
        "judges": [{"label": label, "name": getattr(judge, "name", label)} for label, judge in judges.items()],
        "cases": [
            {"id": c.id, "tags": c.tags, "expected": c.expected.model_dump(), "description": c.description} for c in cases
        ],
        "records": records,
    }


def build_judges(specs: list[str], base: JudgeConfig | None = None) -> dict[str, Judge]:
    """Judges for ``BACKEND[:MODEL]`` specs (``local``, ``litellm:openai/x``, ``claude-cli:sonnet``)."""
    judges: dict[str, Judge] = {}
    for spec in specs:
        parsed = parse_judge_spec(spec)
        if parsed.backend == "none":
            raise ConfigError("judge spec 'none' gives no scores; benchmark a real backend")
        config = (base or JudgeConfig()).model_copy(update={"backend": parsed.backend, "model": parsed.model})
        judges[spec] = make_judge(config)
    return judges


__all__ = [
    "HACKING_TAG",
    "RESULTS_FORMAT",
    "CaseTurn",
    "JudgeCase",
    "ScoreRange",
    "build_judges",
    "load_cases",
    "parse_judge_spec",
    "run_judge_benchmark",
]
