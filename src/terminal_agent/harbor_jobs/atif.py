"""A trial's ``agent/trajectory.json`` in ATIF v1.8 (the Agent Trajectory Interchange Format Harbor reads).

Steps, in order: the system prompt (``system``), the task (``user``), one ``agent`` step per model call, and a
last ``system`` step with the verdict. An agent step holds

* ``message``: the reply as sampled; ``reasoning_content``: a think block the parser took out of it;
* ``tool_calls``: the actions that parsed (``bash`` with its ``cmd`` ...), ids ``call-TURN-INDEX``;
* ``observation.results``: each action's output block with its ``source_call_id``, exit code and duration in
  ``extra``; a malformed tag or a reply without an action is a result without a call id, ``extra.format_error``;
* ``metrics``: token counts, token ids and logprobs when the client gave them, latency and queueing in ``extra``;
* ``extra.messages_sent``: what the call was sent, as the messages added since the previous call
  (``mode: delta``, from ``from_index``) or, when earlier messages changed or for the first call, all of them.

What ATIF has no field for (the step's info, the verdict, the judge) goes in the ``extra`` slots.
"""

from __future__ import annotations

from typing import Any

from terminal_agent.harbor_jobs.records import AgentTurnRecord, HarborTrialRecord, ModelCallRecord

ATIF_SCHEMA_VERSION = "ATIF-v1.8"
AGENT_NAME = "terminal-agent"


def agent_version() -> str:
    from terminal_agent import __version__

    return str(__version__)


def atif_trajectory(record: HarborTrialRecord) -> dict[str, Any]:
    """The ATIF trajectory of ``record`` as a JSON object (ATIF ``Trajectory``)."""
    steps: list[dict[str, Any]] = []
    if record.system_prompt:
        steps.append({"source": "system", "message": record.system_prompt})
    steps.append({"source": "user", "message": record.instruction or f"(task {record.task_id})"})
    turns = iter(record.turns)
    previous: list[dict[str, Any]] | None = None
    calls = record.calls or [_call_of_turn(turn) for turn in record.turns]
    for index, call in enumerate(calls, start=1):
        turn = next(turns, None) if call.reply is not None else None
        steps.append(_agent_step(index, call, turn, previous))
        previous = list(call.messages) + ([{"role": "assistant", "content": call.reply}] if call.reply is not None else [])
    steps.append(_verdict_step(record))
    for number, step in enumerate(steps, start=1):
        step["step_id"] = number
    prompt_total = sum(c.prompt_tokens or 0 for c in calls)
    completion_total = sum(c.completion_tokens or 0 for c in calls)
    return {
        "schema_version": ATIF_SCHEMA_VERSION,
        "session_id": record.outcome.episode_id or record.trial_name,
        "trajectory_id": record.trial_name,
        "agent": {"name": AGENT_NAME, "version": agent_version(), "model_name": record.model_name or None},
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": prompt_total,
            "total_completion_tokens": completion_total,
            "total_steps": len(steps),
        },
        "extra": {"task_id": record.task_id, "attempt": record.attempt, **_verdict(record), **record.metadata},
    }


def _call_of_turn(turn: AgentTurnRecord) -> ModelCallRecord:
    """A call for a turn whose call was not recorded (a transcript without model calls): its reply only."""
    return ModelCallRecord(messages=[], reply=turn.reply)


def _messages_sent(call: ModelCallRecord, previous: list[dict[str, Any]] | None) -> dict[str, Any]:
    if previous is not None and len(call.messages) >= len(previous) and call.messages[: len(previous)] == previous:
        return {"mode": "delta", "from_index": len(previous), "messages": call.messages[len(previous) :]}
    return {"mode": "full", "from_index": 0, "messages": call.messages}


def _agent_step(
    index: int, call: ModelCallRecord, turn: AgentTurnRecord | None, previous: list[dict[str, Any]] | None
) -> dict[str, Any]:
    step: dict[str, Any] = {"source": "agent", "llm_call_count": 1}
    extra: dict[str, Any] = {"turn": index, "messages_sent": _messages_sent(call, previous)}
    if call.reply is None:
        step["message"] = ""
        extra["model_error"] = call.error or "the model call failed"
    else:
        step["message"] = call.reply
    metrics: dict[str, Any] = {}
    for key, value in (("prompt_tokens", call.prompt_tokens), ("completion_tokens", call.completion_tokens),
                       ("prompt_token_ids", call.prompt_ids), ("completion_token_ids", call.completion_ids),
                       ("logprobs", call.logprobs)):
        if value is not None:
            metrics[key] = value
    metrics_extra = {k: v for k, v in (("latency_s", call.latency_s), ("wait_s", call.wait_s),
                                       ("finish_reason", call.finish_reason)) if v is not None}
    if metrics_extra:
        metrics["extra"] = metrics_extra
    if metrics:
        step["metrics"] = metrics
    if turn is not None:
        if turn.thought:
            step["reasoning_content"] = turn.thought
        tool_calls, results = _actions(index, turn)
        if tool_calls:
            step["tool_calls"] = tool_calls
        if results:
            step["observation"] = {"results": results}
        extra["only_errors"] = turn.only_errors
        if turn.info:
            extra["info"] = turn.info
    step["extra"] = extra
    return step


def _actions(index: int, turn: AgentTurnRecord) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tool_calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for position, action in enumerate(turn.actions):
        facts = {"ok": action.ok, "duration_s": action.duration_s}
        if action.exit_code is not None:
            facts["exit_code"] = action.exit_code
        result: dict[str, Any] = {}
        if action.args is None or action.format_error:
            result["extra"] = {**facts, "format_error": True, "tag": action.name}
        else:
            call_id = f"call-{index}-{position}"
            tool_calls.append({"tool_call_id": call_id, "function_name": action.name, "arguments": action.args, "extra": facts})
            result["source_call_id"] = call_id
            result["extra"] = facts
        if action.output is not None:
            result["content"] = action.output
        results.append(result)
    if turn.unattributed_output:
        extra: dict[str, Any] = {"unattributed": True}
        if turn.unattributed_output.lstrip().startswith("<format_error>"):
            extra["format_error"] = True
        results.append({"content": turn.unattributed_output, "extra": extra})
    return tool_calls, results


def _verdict(record: HarborTrialRecord) -> dict[str, Any]:
    outcome = record.outcome
    verdict: dict[str, Any] = {
        "termination": outcome.termination.value,
        "scored": outcome.scored,
        "infrastructure_failure": record.infrastructure_failure,
        "reward": outcome.reward if outcome.scored else None,
        "test_score": outcome.test_score,
    }
    if outcome.error_kind or outcome.error:
        verdict["error"] = {"kind": outcome.error_kind, "message": outcome.error}
    judge = judge_fields(record)
    if judge:
        verdict["judge"] = judge
    return verdict


def judge_fields(record: HarborTrialRecord) -> dict[str, Any]:
    """The judge's score, reasoning, backend, weight and error, as the env recorded them (empty: no judge)."""
    info = record.outcome.final_info()  # the details and the reward's parts, as the env's final info carries them
    fields = {key.removeprefix("judge_"): value for key, value in info.items() if key.startswith("judge_") and value is not None}
    if not fields or (fields.keys() <= {"weight"} and not fields.get("weight")):
        return {}
    return fields


def _verdict_step(record: HarborTrialRecord) -> dict[str, Any]:
    outcome = record.outcome
    if outcome.scored:
        text = f"Episode ended ({outcome.termination.value}); reward {outcome.reward:.3f}"
        if outcome.test_score is not None:
            text += f", tests {outcome.test_score:.3f}"
        judge = judge_fields(record)
        if judge.get("score") is not None:
            text += f", judge {judge['score']}"
    else:
        text = (f"Episode not scored ({outcome.termination.value}): infrastructure failure "
                f"[{outcome.error_kind or 'unknown'}] {outcome.error or ''}").rstrip()
    return {"source": "system", "message": text, "extra": _verdict(record)}


__all__ = ["AGENT_NAME", "ATIF_SCHEMA_VERSION", "agent_version", "atif_trajectory", "judge_fields"]
