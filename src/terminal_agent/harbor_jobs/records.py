"""The typed record one Harbor trial is written from, and the one reader that builds it.

An eval trial's record is read from its transcript (``transcripts/TASK/attempt-N.json``: the model calls, the
episode's :class:`~terminal_agent.outcome.EpisodeOutcome` and the agent's trajectory, as the runner wrote them),
so a run converted long after it ended and a run written live give the same files. A training episode's record
is read from the same parts (:func:`turns_from_trajectory`, the typed outcome) by
:mod:`terminal_agent.harbor_jobs.training_trials`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.evaluation.results import TrialResult
from terminal_agent.outcome import EpisodeOutcome, Grade, RewardParts, Termination, TurnTokens


@dataclass
class ModelCallRecord:
    """One call of the model: what it was sent and what it answered."""

    messages: list[dict[str, Any]]
    """The chat sent, in full."""
    reply: str | None
    """The reply text; None when the call failed."""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    latency_s: float | None = None
    """Seconds the model took."""
    wait_s: float | None = None
    """Seconds queued for a model that runs one call at a time."""
    error: str | None = None
    """The exception of a failed call."""


@dataclass
class ActionRecord:
    """One action tag of a reply, as the agent ran it."""

    name: str
    """Tool name (``bash``, ``file``, ``finish`` ...) or the malformed tag's name."""
    args: dict[str, Any] | None
    """Parsed arguments; None for a tag that did not parse."""
    ok: bool
    duration_s: float = 0.0
    exit_code: int | None = None
    format_error: bool = False
    """The tag did not parse: its output is the teaching message the model saw."""
    output: str | None = None
    """The ``<NAME_output>`` (or ``<format_error>``) block the model saw; None when it cannot be told apart."""


@dataclass
class AgentTurnRecord:
    """One model reply and what it did."""

    reply: str
    """The reply as sampled."""
    thought: str = ""
    """Reasoning the parser took out of the reply (a think block)."""
    actions: list[ActionRecord] = field(default_factory=list)
    observation: str | None = None
    """The whole observation the model saw after this reply (all output blocks, format errors, notes)."""
    unattributed_output: str | None = None
    """Parts of the observation no action claims (a no-action format error, "N later actions not run")."""
    only_errors: bool = False
    """No action of the reply could run."""
    info: dict[str, Any] = field(default_factory=dict)
    """The rest of the step's info (turn time, finish message, truncation, the final verdict on the last one)."""


@dataclass
class HarborTrialRecord:
    """Everything one Harbor trial folder holds."""

    trial_name: str
    """Folder name inside the job (``TASK__attempt-N``; training: ``step-S__group-G__episode-E``)."""
    task_id: str
    attempt: int
    model_name: str
    outcome: EpisodeOutcome
    """The episode's verdict (termination, scored, reward, grade with per-test results, judge fields)."""
    started_at: dt.datetime
    finished_at: dt.datetime
    instruction: str = ""
    system_prompt: str | None = None
    calls: list[ModelCallRecord] = field(default_factory=list)
    turns: list[AgentTurnRecord] = field(default_factory=list)
    trial: TrialResult | None = None
    """The eval's own record of the trial (timings, tokens); None for training episodes."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Facts of the run around the trial: the eval run id, or a training step's group, advantage, policy version."""
    source: str | None = None
    """The dataset label the viewer groups trials by (the tasks file's name)."""

    @property
    def infrastructure_failure(self) -> bool:
        """True when the trial could not be scored: never show it as a reward of 0."""
        return not self.outcome.scored


# --- reading a transcript ---------------------------------------------------------------------------------
def call_from_transcript(call: dict[str, Any]) -> ModelCallRecord:
    response = call.get("response") or {}
    return ModelCallRecord(
        messages=list(call.get("messages") or []),
        reply=response.get("text") if call.get("response") is not None else None,
        finish_reason=response.get("finish_reason"),
        prompt_tokens=response.get("prompt_tokens"),
        completion_tokens=response.get("completion_tokens"),
        prompt_ids=response.get("prompt_ids"),
        completion_ids=response.get("completion_ids"),
        logprobs=response.get("logprobs"),
        latency_s=call.get("latency_s"),
        wait_s=call.get("wait_s"),
        error=call.get("error"),
    )


_STEP_KEYS_KEPT_OUT = ("actions", "only_errors", "grade")


def turns_from_trajectory(trajectory: dict[str, Any] | None, final_observation: str | None) -> list[AgentTurnRecord]:
    """The agent's turns from its rLLM trajectory as JSON (``to_jsonable(agent.trajectory)``).

    A step's ``observation`` is what the model saw *before* its reply, so turn k's output is step k+1's
    observation, and the last turn's is ``final_observation`` (the chat's last message).
    """
    steps = list((trajectory or {}).get("steps") or [])
    turns: list[AgentTurnRecord] = []
    for index, step in enumerate(steps):
        info = dict(step.get("info") or step.get("metadata") or {})  # rLLM HEAD's Step keeps info as ``metadata``
        if index + 1 < len(steps):
            observation = steps[index + 1].get("observation")
        else:
            observation = final_observation
        observation = observation if isinstance(observation, str) else None
        actions = [
            ActionRecord(
                name=str(a.get("name")), args=a.get("args"), ok=bool(a.get("ok")), duration_s=float(a.get("duration_s") or 0.0),
                exit_code=a.get("exit_code"), format_error=bool(a.get("format_error", False)),
            )
            for a in info.get("actions") or []
        ]
        turn = AgentTurnRecord(
            reply=str(step.get("model_response") or step.get("action") or ""),
            thought=str(step.get("thought") or ""),
            actions=actions,
            observation=observation,
            only_errors=bool(info.get("only_errors", False)),
            info={k: v for k, v in info.items() if k not in _STEP_KEYS_KEPT_OUT},
        )
        _split_observation(turn, [int(a.get("output_chars") or 0) for a in info.get("actions") or []])
        turns.append(turn)
    return turns


def _split_observation(turn: AgentTurnRecord, lengths: list[int]) -> None:
    """Give each action its own output block: the observation is the blocks joined by newlines, each action
    recording its block's length. When the observation was cut or prefixed (a length correction), the blocks
    cannot be told apart and the whole observation stays unattributed."""
    text = turn.observation
    if text is None:
        return
    position = 0
    outputs: list[str] = []
    for length in lengths:
        block = text[position : position + length]
        if len(block) != length or not block.startswith("<") or not block.endswith(">"):
            turn.unattributed_output = text
            return
        outputs.append(block)
        position += length + 1
    for action, output in zip(turn.actions, outputs):
        action.output = output
    rest = text[position:] if position else text
    turn.unattributed_output = rest or None


def outcome_from_transcript(transcript: dict[str, Any], trial: TrialResult) -> EpisodeOutcome:
    """The episode's typed outcome; for a trial that never produced one (an exception, a wall clock),
    the verdict of the eval's own record."""
    raw = (transcript.get("episode") or {}).get("outcome") if isinstance(transcript.get("episode"), dict) else None
    if isinstance(raw, dict):
        return EpisodeOutcome(
            task_id=str(raw.get("task_id") or trial.task_id),
            termination=Termination.from_legacy(raw.get("termination") or "", raw.get("error_kind")),
            scored=bool(raw.get("scored")),
            reward=raw.get("reward"),
            test_score=raw.get("test_score"),
            error_kind=raw.get("error_kind"),
            error=raw.get("error"),
            tampered=bool(raw.get("tampered", False)),
            turns=int(raw.get("turns") or 0),
            turn_tokens=tuple(TurnTokens(**t) for t in raw.get("turn_tokens") or []),
            grade=Grade.from_info(raw["grade"]) if isinstance(raw.get("grade"), dict) else None,
            reward_parts=_reward_parts(raw.get("reward_parts")),
            episode_id=raw.get("episode_id"),
            details=dict(raw.get("details") or {}),
        )
    return EpisodeOutcome(
        task_id=trial.task_id,
        termination=trial.termination,
        scored=trial.scored,
        reward=trial.reward,
        error_kind=trial.error.kind if trial.error else None,
        error=trial.error.message if trial.error else None,
        turns=trial.turns,
    )


def _reward_parts(raw: object) -> RewardParts | None:
    """The reward's parts of a transcript's outcome (absent in transcripts written before they were typed)."""
    if not isinstance(raw, dict):
        return None
    return RewardParts(test_score=raw.get("test_score"), judge_score=raw.get("judge_score"),
                       judge_scored=raw.get("judge_scored"), judge_weight=float(raw.get("judge_weight") or 0.0),
                       notes=tuple(raw.get("notes") or ()))


def final_observation_of(calls: list[ModelCallRecord], transcript: dict[str, Any]) -> str | None:
    """The observation after the last reply: recorded by the runner (``final_observation``); in transcripts
    written before it, unknown."""
    value = transcript.get("final_observation")
    return value if isinstance(value, str) else None


def trial_name_for(task_id: str, attempt: int) -> str:
    """The trial folder of an eval attempt (task ids are safe directory names)."""
    return f"{task_id}__attempt-{attempt}"


def record_from_transcript(
    transcript: dict[str, Any],
    trial: TrialResult,
    *,
    started_at: dt.datetime,
    finished_at: dt.datetime,
    metadata: dict[str, Any] | None = None,
    source: str | None = None,
) -> HarborTrialRecord:
    """The typed record of one eval trial from its transcript and its ``results.json`` entry."""
    calls = [call_from_transcript(c) for c in transcript.get("model_calls") or []]
    raw_episode = transcript.get("episode")
    episode: dict[str, Any] = raw_episode if isinstance(raw_episode, dict) else {}
    raw_trajectory = episode.get("trajectory")
    trajectory = raw_trajectory if isinstance(raw_trajectory, dict) else None
    system_prompt = None
    if calls and calls[0].messages and calls[0].messages[0].get("role") == "system":
        system_prompt = str(calls[0].messages[0].get("content") or "")
    return HarborTrialRecord(
        trial_name=trial_name_for(trial.task_id, trial.attempt),
        task_id=trial.task_id,
        attempt=trial.attempt,
        model_name=str(transcript.get("model") or ""),
        outcome=outcome_from_transcript(transcript, trial),
        started_at=started_at,
        finished_at=finished_at,
        instruction=str(transcript.get("instruction") or ""),
        system_prompt=system_prompt,
        calls=calls,
        turns=turns_from_trajectory(trajectory, final_observation_of(calls, transcript)),
        trial=trial,
        metadata=dict(metadata or {}),
        source=source,
    )


__all__ = [
    "ActionRecord",
    "AgentTurnRecord",
    "HarborTrialRecord",
    "ModelCallRecord",
    "call_from_transcript",
    "record_from_transcript",
    "trial_name_for",
    "turns_from_trajectory",
]
